package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ValidateJSON checks a JSON document, such as the output a task produced, against the
// schema. Its problems are those of Validate, sorted by path, each with Pointer set; an empty
// doc is checked as null. The error is for a doc that is not JSON.
//
// It does not go through cty: an output is checked as the component or plugin wrote it, before
// anything reads it.
func (s *Schema) ValidateJSON(doc []byte) ([]Problem, error) {
	x, err := DecodeJSON(doc)
	if err != nil {
		return nil, err
	}
	return s.ValidateDoc(x), nil
}

// DecodeJSON decodes a JSON document as ValidateJSON reads it: numbers as json.Number (exact),
// an empty doc as null, nothing allowed after the value. FromJSON converts what it returns, so
// a caller that checks a document and then uses it decodes it once (ValidateDoc).
func DecodeJSON(doc []byte) (any, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	x, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	return x, nil
}

// ValidateDoc is ValidateJSON for a document DecodeJSON decoded; it does not change x.
func (s *Schema) ValidateDoc(x any) []Problem {
	verr := s.root.Validate(x)
	if verr == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return []Problem{{Message: verr.Error()}}
	}
	r := reporter{s: s, doc: x}
	return render(r.collect(ve))
}

// pointer is p as a JSON Pointer (RFC 6901): "/headers/Accept", "/args/2"; "" is the whole
// value.
func (p path) pointer() string {
	var b strings.Builder
	for _, s := range p {
		b.WriteByte('/')
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
			continue
		}
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s.key))
	}
	return b.String()
}
