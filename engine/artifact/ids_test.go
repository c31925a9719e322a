package artifact

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestIDsIn(t *testing.T) {
	a := "sha256:" + strings.Repeat("a", 64)
	b := "sha256:" + strings.Repeat("b", 64)
	cases := []struct {
		name string
		v    string
		want []string
	}{
		{"nothing", `{"x": 1}`, nil},
		{"empty", ``, nil},
		{"not JSON", `{"artifact_id": "` + a + `"`, nil},
		{"a spilled output", `{"artifact_id": "` + a + `", "content_type": "application/json", "size": 171}`, []string{a}},
		{"nested and in arrays", `{"z": [{"artifact_id": "` + b + `"}], "y": {"file": {"artifact_id": "` + a + `"}}}`, []string{a, b}},
		{"each once", `[{"artifact_id": "` + a + `"}, {"artifact_id": "` + a + `"}]`, []string{a}},
		{"not an artifact id", `{"artifact_id": "sha256:xyz"}`, nil},
		{"not a string", `{"artifact_id": 7}`, nil},
		{"the key as a value", `{"k": "artifact_id"}`, nil},
		{"bare hex", `{"artifact_id": "` + strings.Repeat("c", 64) + `"}`, []string{strings.Repeat("c", 64)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := IDsIn(json.RawMessage(tc.v))
			if !slices.Equal(got, tc.want) {
				t.Errorf("IDsIn(%s) = %v, want %v", tc.v, got, tc.want)
			}
		})
	}
}
