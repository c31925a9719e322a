package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func logOnce(t *testing.T, format string) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	tel, err := Setup(context.Background(), Config{Getenv: env(nil), Stderr: &buf, LogFormat: format})
	if err != nil {
		return "", err
	}
	tel.Logger.Info("hello", "execution_id", "exec-1")
	return buf.String(), nil
}

func isJSON(s string) bool {
	var v map[string]any
	return json.Unmarshal([]byte(s), &v) == nil && v["msg"] == "hello" && v["execution_id"] == "exec-1"
}

func TestLogFormats(t *testing.T) {
	text, err := logOnce(t, "text")
	if err != nil {
		t.Fatal(err)
	}
	if isJSON(text) || !strings.Contains(text, "msg=hello") || !strings.Contains(text, "execution_id=exec-1") {
		t.Errorf("text output = %q", text)
	}
	js, err := logOnce(t, "json")
	if err != nil {
		t.Fatal(err)
	}
	if !isJSON(js) {
		t.Errorf("json output = %q", js)
	}
	// A bytes.Buffer is not a terminal, so auto picks JSON.
	auto, err := logOnce(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if !isJSON(auto) {
		t.Errorf("auto output on a buffer = %q, want JSON", auto)
	}
}

func TestUnknownLogFormat(t *testing.T) {
	_, err := logOnce(t, "xml")
	if err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Fatalf("err = %v, want it to name the format", err)
	}
}

func TestResolveLogFormat(t *testing.T) {
	for _, tc := range []struct {
		format   string
		terminal bool
		want     string
	}{
		{"", true, "text"},
		{"", false, "json"},
		{"json", true, "json"},
		{"text", false, "text"},
	} {
		got, err := resolveLogFormat(tc.format, tc.terminal)
		if err != nil || got != tc.want {
			t.Errorf("resolveLogFormat(%q, %v) = %q, %v; want %q", tc.format, tc.terminal, got, err, tc.want)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file is reported as a terminal")
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is reported as a terminal")
	}
}
