package artifact

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// IDsIn returns the artifact ids a JSON value references: the "artifact_id" of every object in
// it (at any depth) whose value is an artifact id, each once, in a stable order (objects by key,
// arrays by index). A value that is not JSON references nothing.
func IDsIn(v json.RawMessage) []string {
	if !bytes.Contains(v, []byte(`"artifact_id"`)) {
		return nil // the common case, without decoding
	}
	var doc any
	if json.Unmarshal(v, &doc) != nil {
		return nil
	}
	var ids []string
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if id, ok := v["artifact_id"].(string); ok {
				if _, valid := hexOf(id); valid && !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return ids
}
