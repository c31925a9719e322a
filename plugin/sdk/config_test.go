package sdk

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	c, err := parseConfig([]byte(`{"s":"text","n":1.5,"l":[1,"a"],"null":null}`))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"s": "text", "n": "1.5", "l": `[1,"a"]`} {
		if got, ok := c.String(key); !ok || got != want {
			t.Errorf("String(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	for _, key := range []string{"null", "absent"} {
		if got, ok := c.String(key); ok {
			t.Errorf("String(%q) = %q, true; want not set", key, got)
		}
	}

	var v struct {
		S string `json:"s"`
		N float64
	}
	if err := (Config{"s": json.RawMessage(`"x"`), "n": json.RawMessage(`2`)}).Decode(&v); err != nil || v.S != "x" || v.N != 2 {
		t.Errorf("Decode = %+v, %v", v, err)
	}
	if err := (Config{"typo": json.RawMessage(`1`)}).Decode(&v); err == nil || !strings.Contains(err.Error(), `"/typo" is not a known field`) {
		t.Errorf("Decode of an unknown key = %v", err)
	}
	if err := (Config(nil)).Decode(&v); err != nil {
		t.Errorf("Decode of a nil config = %v", err)
	}
	if _, err := parseConfig([]byte(`[1]`)); err == nil || err.Error() != "config must be a JSON object, not an array" {
		t.Errorf("parseConfig([1]) = %v", err)
	}
	if c, err := parseConfig(nil); err != nil || c == nil || len(c) != 0 {
		t.Errorf("parseConfig(nil) = %v, %v", c, err)
	}
}
