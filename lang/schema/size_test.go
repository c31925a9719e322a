package schema

import "testing"

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 100: "100 bytes", 1024: "1 KiB",
		10 << 20: "10 MiB", 3 << 30: "3 GiB", 1536: "1536 bytes", 10_000_000: "10000000 bytes"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q; want %q", n, got, want)
		}
	}
}
