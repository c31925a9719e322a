package execcore

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCaptureKeepsFirstBytesAndDrains(t *testing.T) {
	c := NewCapture(10)
	for _, s := range []string{"hello ", "world, ", "and more"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want all of it accepted", s, n, err)
		}
	}
	if got := c.String(); got != "hello worl" {
		t.Errorf("String() = %q, want %q", got, "hello worl")
	}
	if !c.Truncated() {
		t.Error("Truncated() = false after 21 bytes into a 10-byte capture")
	}
	if got := c.Tail(); got != "hello world, and more" {
		t.Errorf("Tail() = %q", got)
	}
}

func TestCaptureExactLimitIsNotTruncated(t *testing.T) {
	c := NewCapture(4)
	c.Write([]byte("abcd"))
	if c.Truncated() || c.String() != "abcd" {
		t.Errorf("got %q truncated=%v, want \"abcd\" false", c.String(), c.Truncated())
	}
}

func TestCaptureTailIsBounded(t *testing.T) {
	c := NewCapture(0)
	c.Write([]byte(strings.Repeat("a", 3000)))
	c.Write([]byte(strings.Repeat("b", 3000)))
	tail := c.Tail()
	if len(tail) != tailSize || !strings.HasSuffix(tail, strings.Repeat("b", 3000)) {
		t.Errorf("tail has %d bytes, want %d ending with the last write", len(tail), tailSize)
	}
	c.Write([]byte(strings.Repeat("c", 5000)))
	if c.Tail() != strings.Repeat("c", tailSize) {
		t.Error("a write longer than the tail should replace it")
	}
}

func TestCaptureDropsCutRune(t *testing.T) {
	c := NewCapture(4)
	c.Write([]byte("abcé")) // é is 2 bytes: the cut falls inside it
	if got := c.String(); got != "abc" {
		t.Errorf("String() = %q, want %q", got, "abc")
	}
}

func TestCheckExit(t *testing.T) {
	tests := []struct {
		name   string
		code   int
		signal string
		allow  []int
		ok     bool
		msg    string
	}{
		{"zero", 0, "", nil, true, ""},
		{"non-zero", 3, "", nil, false, "command /bin/x exited with code 3; stderr ends with: b | c | d"},
		{"allowed", 3, "", []int{1, 3}, true, ""},
		{"signal", -1, "KILL", []int{0, 137}, false, "command /bin/x was killed by signal KILL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckExit("command /bin/x", tt.code, tt.signal, tt.allow, "a\nb\n\nc\nd\n")
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err == nil {
				return
			}
			if KindOf(err) != Fatal {
				t.Errorf("kind = %v, want Fatal", KindOf(err))
			}
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("%v is not an *ExitError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("message %q, want prefix %q", err.Error(), tt.msg)
			}
		})
	}
}

func TestStderrExcerptIsBounded(t *testing.T) {
	got := StderrExcerpt(strings.Repeat("é", 1000))
	if len(got) > tailBytes+len("…") || !strings.HasPrefix(got, "…é") {
		t.Errorf("excerpt of %d bytes starting %q", len(got), got[:8])
	}
	if StderrExcerpt("\n \n") != "" {
		t.Error("blank stderr should give an empty excerpt")
	}
}

func TestParseTimeout(t *testing.T) {
	if d, err := ParseTimeout(""); d != 0 || err != nil {
		t.Errorf(`ParseTimeout("") = %v, %v`, d, err)
	}
	if d, err := ParseTimeout("1m30s"); d != 90*time.Second || err != nil {
		t.Errorf(`ParseTimeout("1m30s") = %v, %v`, d, err)
	}
	for _, s := range []string{"soon", "10", "-1s", "0s"} {
		if _, err := ParseTimeout(s); err == nil {
			t.Errorf("ParseTimeout(%q) succeeded", s)
		}
	}
}

func TestCheckCommon(t *testing.T) {
	ps := CheckCommon("nope", map[string]string{"A=B": "x", "OK": "v\x00"}, []int{0, 256}, AllKnown)
	var paths []string
	for _, p := range ps {
		paths = append(paths, p.Path)
	}
	want := "/timeout /env/A=B /env/OK /allow_exit_codes/1"
	if strings.Join(paths, " ") != want {
		t.Errorf("paths = %v, want %s", paths, want)
	}
	unknownTimeout := func(p string) bool { return p != "/timeout" }
	if ps := CheckCommon("", nil, nil, unknownTimeout); len(ps) != 0 {
		t.Errorf("an unknown timeout should not be checked: %v", ps)
	}
	err := ProblemsError(nil)
	if err != nil {
		t.Errorf("ProblemsError(nil) = %v", err)
	}
	err = ProblemsError([]Problem{{Path: "/command", Summary: "command must be absolute", Detail: `got "ls"`}})
	var e *Error
	if !errors.As(err, &e) || e.Kind != Invalid || e.Path != "/command" || !strings.Contains(err.Error(), "command") {
		t.Errorf("ProblemsError = %#v", err)
	}
}

func TestEnvListNeverNil(t *testing.T) {
	if EnvList(nil) == nil {
		t.Error("EnvList(nil) is nil: os/exec would inherit the plugin's environment")
	}
	if got := strings.Join(EnvList(map[string]string{"B": "2", "A": "1"}), ","); got != "A=1,B=2" {
		t.Errorf("EnvList = %s", got)
	}
}
