package execcore

import "unicode/utf8"

// FitStreams cuts stdout and stderr so that, written as JSON strings, their contents take at
// most room bytes together, and reports whether it cut anything. Each stream keeps its
// beginning, on a character boundary. When both do not fit, each may have half of room, and
// one that needs less leaves the rest to the other.
//
// The engine refuses a node output larger than max_node_output, and JSON escaping makes a
// stream longer than its bytes: a quote or a newline takes 2 bytes, a control byte, an
// invalid UTF-8 byte, <, > or & (encoding/json escapes them for HTML) 6. Counting raw bytes,
// as the capture does, is not enough.
func FitStreams(stdout, stderr string, room int) (string, string, bool) {
	no, ne := JSONLen(stdout), JSONLen(stderr)
	if no+ne <= room {
		return stdout, stderr, false
	}
	half := room / 2
	roomOut, roomErr := half, room-half
	switch {
	case ne <= roomErr:
		roomOut = room - ne
	case no <= roomOut:
		roomErr = room - no
	}
	return fitJSON(stdout, roomOut), fitJSON(stderr, roomErr), true
}

// JSONLen is the length of s's contents once encoding/json writes it as a string, without
// the quotes. It never counts less than encoding/json writes.
func JSONLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c, size := jsonCost(s[i:])
		n += c
		i += size
	}
	return n
}

// fitJSON is the longest prefix of s, cut between characters, whose JSON contents fit in room.
func fitJSON(s string, room int) string {
	n := 0
	for i := 0; i < len(s); {
		c, size := jsonCost(s[i:])
		if n+c > room {
			return s[:i]
		}
		n += c
		i += size
	}
	return s
}

// jsonCost is what the first character of s costs in a JSON string, and its size in s.
func jsonCost(s string) (cost, size int) {
	b := s[0]
	if b < utf8.RuneSelf {
		switch {
		case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t':
			return 2, 1
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			return 6, 1 // \u00XX
		}
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size == 1:
		return 6, 1 // \ufffd
	case r == '\u2028' || r == '\u2029':
		return 6, size
	}
	return size, size
}
