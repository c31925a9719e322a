package guest

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fuscia/fuscia/internal/jsonenc"
)

// The request's envelope and the response, read and written without encoding/json's
// reflection. In a Go guest's attempt, decoding the request (validated once, then decoded
// field by field) and encoding the response were two thirds of the SDK's work, and the Go
// runtime runs several times slower in Wasm than natively (docs/performance.md, issue 20 item
// 5). Both are fast paths only: whatever they do not handle exactly as encoding/json does
// (escapes in the envelope's strings, case-folded or misplaced keys, a trigger's event, a
// continue's progress, anything malformed) goes to encoding/json, so the results, and the
// errors, stay encoding/json's. FuzzParseRequest and FuzzResponseJSON hold them to that.

// maxFastDepth bounds the nesting the fast path follows in a raw value; deeper goes to
// encoding/json, whose own limit (10,000) then applies.
const maxFastDepth = 64

// parseRequest decodes data into req as json.Unmarshal would, or returns false, with req
// possibly half-filled, for the caller to decode it with json.Unmarshal into a fresh request.
func parseRequest(data []byte, req *request) bool {
	s := scanner{b: data}
	ok := s.object(func(key string) bool {
		var ok bool
		switch key {
		case "kind":
			req.Kind, ok = s.plainString()
		case "name":
			req.Name, ok = s.plainString()
		case "context":
			ok = s.context(&req.Context)
		case "input":
			req.Input, ok = s.value()
		case "state":
			req.State, ok = s.value()
		default:
			// A trigger's event is decoded by encoding/json; so is a key that encoding/json
			// would match to a field without regard to case.
			if isRequestKey(key) {
				return false
			}
			_, ok = s.value()
		}
		return ok
	})
	if !ok {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// isRequestKey reports whether key names a field of request or contextJSON, whatever its case.
func isRequestKey(key string) bool {
	for _, k := range [...]string{"kind", "name", "context", "input", "state", "event",
		"execution_id", "workflow", "node", "task_id", "attempt", "iteration"} {
		if strings.EqualFold(key, k) {
			return true
		}
	}
	return false
}

// context decodes the request's context object into c, merging as encoding/json does when the
// key appears twice.
func (s *scanner) context(c *contextJSON) bool {
	return s.object(func(key string) bool {
		var ok bool
		switch key {
		case "execution_id":
			c.ExecutionID, ok = s.plainString()
		case "workflow":
			c.Workflow, ok = s.plainString()
		case "node":
			c.Node, ok = s.plainString()
		case "task_id":
			c.TaskID, ok = s.plainString()
		case "attempt":
			c.Attempt, ok = s.integer()
		case "iteration":
			if s.literal("null") {
				c.Iteration, ok = nil, true
				break
			}
			var n int
			if n, ok = s.integer(); ok {
				c.Iteration = &n
			}
		default:
			if isRequestKey(key) {
				return false
			}
			_, ok = s.value()
		}
		return ok
	})
}

// scanner reads JSON from b at i. Every method returns false on what it does not accept,
// malformed or merely unusual; the caller then leaves the whole document to encoding/json.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// eat consumes c, after white space.
func (s *scanner) eat(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads an object whose keys are plain strings, calling member with the scanner at
// each key's value.
func (s *scanner) object(member func(key string) bool) bool {
	return s.sequence('{', '}', func() bool {
		key, ok := s.plainString()
		if !ok || !s.eat(':') {
			return false
		}
		s.space()
		return member(key)
	})
}

// sequence reads open, items separated by commas, and close, calling item with the scanner at
// each item.
func (s *scanner) sequence(open, close byte, item func() bool) bool {
	if !s.eat(open) {
		return false
	}
	if s.eat(close) {
		return true
	}
	for {
		s.space()
		if !item() {
			return false
		}
		if !s.eat(',') {
			return s.eat(close)
		}
	}
}

// plainString reads a string of printable ASCII without escapes, which decodes to its bytes.
func (s *scanner) plainString() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			v := string(s.b[s.i+1 : j])
			s.i = j + 1
			return v, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", false
		}
	}
	return "", false
}

// integer reads a number without fraction or exponent that fits an int.
func (s *scanner) integer() (int, bool) {
	start := s.i
	if !s.number() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 0)
	return int(n), err == nil
}

// value reads any JSON value and returns its bytes, as json.RawMessage keeps them.
func (s *scanner) value() ([]byte, bool) {
	start := s.i
	if !s.skip(0) {
		return nil, false
	}
	return s.b[start:s.i], true
}

// skip reads one value, checking it against JSON's grammar.
func (s *scanner) skip(depth int) bool {
	if s.i >= len(s.b) || depth > maxFastDepth {
		return false
	}
	switch c := s.b[s.i]; c {
	case '{':
		return s.sequence('{', '}', func() bool {
			if !s.string() || !s.eat(':') {
				return false
			}
			s.space()
			return s.skip(depth + 1)
		})
	case '[':
		return s.sequence('[', ']', func() bool { return s.skip(depth + 1) })
	case '"':
		return s.string()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	return s.fullNumber()
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// string reads a string as JSON's grammar has it: no control characters, valid escapes. Like
// encoding/json, it accepts any other byte, invalid UTF-8 included.
func (s *scanner) string() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.b) {
				return false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) {
					return false
				}
				for _, h := range s.b[j+1 : j+5] {
					if !isHex(h) {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads an integer: -?(0|[1-9][0-9]*), not followed by a fraction or an exponent.
func (s *scanner) number() bool {
	return s.integerPart() && (s.i == len(s.b) || !strings.ContainsRune(".eE0123456789", rune(s.b[s.i])))
}

// integerPart reads -?(0|[1-9][0-9]*).
func (s *scanner) integerPart() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == '0' {
		s.i++
		return true
	}
	return s.digits()
}

// fullNumber reads any JSON number.
func (s *scanner) fullNumber() bool {
	if !s.integerPart() {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one digit or more.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// appendJSON appends r as json.Marshal encodes it, or returns false for the caller to use
// json.Marshal (a continue's progress, a raw message that is not JSON).
func (r response) appendJSON(b []byte) ([]byte, bool) {
	if r.Progress != nil {
		return b, false
	}
	var err error
	b = append(b, `{"type":`...)
	b = jsonenc.String(b, r.Type)
	raw := func(name string, v json.RawMessage) {
		if len(v) == 0 || err != nil {
			return
		}
		b = append(b, `,"`+name+`":`...)
		b, err = jsonenc.Raw(b, v)
	}
	str := func(name, v string) {
		if v != "" {
			b = append(b, `,"`+name+`":`...)
			b = jsonenc.String(b, v)
		}
	}
	num := func(name string, v int64) {
		if v != 0 {
			b = append(b, `,"`+name+`":`...)
			b = strconv.AppendInt(b, v, 10)
		}
	}
	raw("output", r.Output)
	str("reason", r.Reason)
	str("selected", r.Selected)
	raw("state", r.State)
	num("delay_ms", r.DelayMS)
	str("kind", r.Kind)
	str("message", r.Message)
	num("backoff_hint_ms", r.BackoffHintMS)
	raw("partial_output", r.PartialOutput)
	raw("payload", r.Payload)
	if err != nil {
		return b, false
	}
	return append(b, '}'), true
}
