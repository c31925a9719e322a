package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// same checks each appender against encoding/json for s: as a string, as raw JSON (bytes or
// the refusal) and as the key and the value of a map.
func same(t *testing.T, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := String([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Errorf("String(%q) = %s, want x%s", s, got, want)
	}
	wantRaw, wantErr := json.Marshal(json.RawMessage(s))
	gotRaw, gotErr := Raw([]byte("x"), []byte(s))
	switch {
	case (gotErr != nil) != (wantErr != nil):
		t.Errorf("Raw(%q): error %v, encoding/json's %v", s, gotErr, wantErr)
	case gotErr != nil && string(gotRaw) != "x":
		t.Errorf("Raw(%q) refused it but left %q, want the prefix only", s, gotRaw)
	case gotErr == nil && !bytes.Equal(gotRaw, append([]byte("x"), wantRaw...)):
		t.Errorf("Raw(%q) = %s, want x%s", s, gotRaw, wantRaw)
	}
	m := map[string]string{s: s, "a": "1", "z" + s: "<&>"}
	wantMap, _ := json.Marshal(m)
	if got := StringMap(nil, m); !bytes.Equal(got, wantMap) {
		t.Errorf("StringMap = %s, want %s", got, wantMap)
	}
}

func TestMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", "with \"quotes\" and \\", "tab\tnewline\n\x00\x1f", "<b>&amp;</b>", "<x>", "a>b",
		"café ✓", "\u2028\u2029", "caf\xe9 \xff", "日本語",
		`{"a": [1, 2.5e3, true, null, "<x>"]}`, " [ 1 , 2 ] ", `"\u2028"`, "{\"s\": \"\u2029\"}",
		`{"a": `, `{} {}`, "\"caf\xe9\"", `1e999`, `-0`, `"\ud800"`,
	} {
		same(t, s)
	}
	if got := StringMap(nil, nil); string(got) != "null" {
		t.Errorf("StringMap(nil) = %s, want null", got)
	}
	big := map[string]string{}
	for _, k := range []string{"q", "b", "Z", "a", "é", "_", "0", "Host", "X-Forwarded-For", "accept",
		"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"} {
		big[k] = k + "!"
	}
	want, _ := json.Marshal(big)
	if got := StringMap(nil, big); !bytes.Equal(got, want) {
		t.Errorf("StringMap of %d keys = %s, want %s", len(big), got, want)
	}
}

func FuzzMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"plain", "<&>", "\u2028", `{"a":[1, "x"]}`, "caf\xe9", `{"a": `} {
		f.Add(s)
	}
	f.Fuzz(same)
}
