package cluster

import (
	"strings"
	"testing"
)

// TestConfigPrefix checks the prefixes Check takes and refuses (its pattern is compiled on
// first use, not at start-up).
func TestConfigPrefix(t *testing.T) {
	for prefix, ok := range map[string]bool{
		"fuscia":                 true,
		"a":                      true,
		"0team_a-b":              true,
		strings.Repeat("a", 64):  true,
		strings.Repeat("a", 65):  false,
		"-team":                  false,
		"_team":                  false,
		"Team":                   false,
		"team.a":                 false,
		"team a":                 false,
		"team\n":                 false,
		"tëam":                   false,
		"team>":                  false,
		"team*":                  false,
		"fuscia_ok-1" + "\x00":   false,
		"ok_" + "0123456789abcd": true,
	} {
		c := Config{URLs: "nats://127.0.0.1:4222", Prefix: prefix, Key: newKey(t)}
		err := c.Check()
		if ok && err != nil {
			t.Errorf("prefix %q refused: %v", prefix, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "-nats-prefix")) {
			t.Errorf("prefix %q: got %v, want an error about -nats-prefix", prefix, err)
		}
	}
}

// TestToken checks that a subject token is the string itself when it may be one, else a
// digest of it that may.
func TestToken(t *testing.T) {
	for s, same := range map[string]bool{
		"01M8BA1QB6ZN85A97EF7NY1AZH": true,
		"task_a-1":                   true,
		strings.Repeat("x", 64):      true,
		strings.Repeat("x", 65):      false,
		"":                           false,
		"task.a":                     false,
		"a b":                        false,
		"a>":                         false,
		"a*":                         false,
	} {
		got := token(s)
		if same && got != s {
			t.Errorf("token(%q) = %q, want it unchanged", s, got)
		}
		if !same && (got == s || len(got) != 25 || got[0] != 'h' || strings.ContainsAny(got, ".*> ")) {
			t.Errorf("token(%q) = %q, want h and 24 hex digits", s, got)
		}
	}
}
