package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Config is the plugin block's evaluated config: each key with its value as JSON. At plan time
// an unknown value is null (see Unknowns).
type Config map[string]json.RawMessage

// String returns the value of key and whether it is set: a string as is, any other value (a
// number, a list, an object) as its JSON encoding. A null value is not set.
func (c Config) String(key string) (string, bool) {
	raw, ok := c[key]
	if !ok || isNull(raw) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	return string(bytes.TrimSpace(raw)), true
}

// Decode decodes the whole config into v, usually a pointer to a struct, strictly: a key that v
// has no field for, or a value of the wrong type, is an error, so that a typo in the workflow
// is reported rather than ignored.
func (c Config) Decode(v any) error {
	raw, err := json.Marshal(map[string]json.RawMessage(c))
	if err != nil {
		return fmt.Errorf("decode config: %w", err)
	}
	if c == nil {
		raw = []byte("{}")
	}
	if err := decodeStrict(raw, v, "the config"); err != nil {
		return fmt.Errorf("decode config: %w", err)
	}
	return nil
}

// parseConfig reads a request's config: a JSON object, or nothing for {}.
func parseConfig(raw []byte) (Config, error) {
	if isNull(raw) {
		return Config{}, nil
	}
	var c Config
	if err := json.Unmarshal(raw, &c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("config must be a JSON object, not %s", article(te.Value))
		}
		return nil, fmt.Errorf("config is not valid JSON: %w", err)
	}
	if c == nil {
		c = Config{}
	}
	return c, nil
}
