package lang

import "time"

// parseTimestamp parses an RFC 3339 timestamp, the only form `until` accepts.
func parseTimestamp(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
