package addrs

// MaxNameLength is the longest name of a workflow, variable, node or any other label, in bytes
// (docs/reference/language.md).
const MaxNameLength = 64

// ValidName reports whether s is a valid name: [a-z][a-z0-9_-]*, at most MaxNameLength bytes.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLength || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
