package schema

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "30s", want: 30 * time.Second},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "0", want: 0},
		{in: "1.5s", want: 1500 * time.Millisecond},
		{in: "abc", wantErr: `invalid duration "abc": a duration is a number with a unit`},
		{in: "10", wantErr: `like "500ms", "30s" or "1h30m"`},
		{in: "", wantErr: `invalid duration ""`},
		{in: "1d", wantErr: `invalid duration "1d"`},
		{in: "PT1M", wantErr: `invalid duration "PT1M"`},
		{in: "-1s", wantErr: `invalid duration "-1s": a duration must not be negative`},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDuration(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "1024", want: 1024},
		{in: "0", want: 0},
		{in: "100B", want: 100},
		{in: "512KiB", want: 512 << 10},
		{in: "10MiB", want: 10 << 20},
		{in: "1GiB", want: 1 << 30},
		{in: "2TiB", want: 2 << 40},
		{in: "10kB", want: 10_000},
		{in: "10KB", want: 10_000},
		{in: "10MB", want: 10_000_000},
		{in: "3GB", want: 3_000_000_000},
		{in: "1TB", want: 1_000_000_000_000},
		{in: "10 MiB", want: 10 << 20},
		{in: " 7 ", want: 7},
		{in: "", wantErr: `invalid size "": a size is a whole number of bytes`},
		{in: "MiB", wantErr: `like "512KiB", "10MiB" or "10MB"`},
		{in: "10mb", wantErr: `invalid size "10mb"`},
		{in: "10XB", wantErr: `KiB, MiB, GiB, TiB`},
		{in: "1.5GiB", wantErr: `invalid size "1.5GiB"`},
		{in: "-1", wantErr: `invalid size "-1": a size must not be negative`},
		{in: "99999999999TiB", wantErr: `invalid size "99999999999TiB": the size is too large`},
		{in: "99999999999999999999", wantErr: `too large`},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSize(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestCheckHTTPURL(t *testing.T) {
	tests := []struct {
		in   string
		want string // a substring of the reason, "" when valid
	}{
		{"https://example.com", ""},
		{"HTTP://example.com:8080/a?b=c", ""},
		{"ftp://example.com", `"ftp"`},
		{"example.com", "no scheme"},
		{"https://", "no host"},
		{"https://exa mple.com/%zz", "does not parse"},
	}
	for _, tt := range tests {
		got := checkHTTPURL(tt.in)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("checkHTTPURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The standard "duration" format is ISO 8601; ours must be Go's, in any schema.
func TestDurationFormatOverridesISO(t *testing.T) {
	s := mustCompile(t, `{"type": "string", "format": "duration"}`)
	if ps := s.Validate(strVal("1h30m")); ps != nil {
		t.Errorf("Go duration rejected: %v", ps)
	}
	if ps := s.Validate(strVal("PT1M")); len(ps) != 1 {
		t.Errorf("ISO 8601 duration accepted: %v", ps)
	}
}
