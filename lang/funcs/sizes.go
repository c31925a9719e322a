package funcs

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// The checks of this file bound what a function builds from what it is given: a result of
// more than maxBuiltString bytes, or a list of more than maxBuiltElements elements, is refused
// before it is made. Each was one short expression that multiplied its arguments: nine nested
// replace calls asked for 10 GB, a split of a 16 MiB string on "" for 16 million elements
// (1.6 GB of values), a flatten of the same long list a thousand times for a thousand times
// its length.

// maxBuiltElements bounds the elements split, regexall, concat and flatten return: the bound of
// for_each, setproduct and for expressions (a list of a million strings took go-cty 5 s).
const maxBuiltElements = 100_000

// textSize is an upper bound of the bytes v takes written out as text (format's %v, or
// jsonencode): its strings' bytes, each possibly escaped to six (\u003c), and a few bytes
// for every other value. It stops counting past limit.
func textSize(v cty.Value, limit int) int {
	size := 0
	_ = cty.Walk(v, func(_ cty.Path, el cty.Value) (bool, error) {
		if size > limit {
			return false, nil
		}
		el, _ = el.Unmark()
		switch {
		case !el.IsKnown() || el.IsNull():
			size += 4
		case el.Type() == cty.String:
			s := el.AsString()
			size += 2 + len(s) + 5*strings.Count(s, "\\") + 5*strings.Count(s, "\"") + 5*countEscaped(s)
		case el.Type() == cty.Number:
			size += len(el.AsBigFloat().Text('g', -1))
		default:
			size += 8
		}
		return true, nil
	})
	return size
}

// countEscaped counts the bytes of s that JSON writes as \u00XX: control bytes and <, >, &.
func countEscaped(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '<' || c == '>' || c == '&' {
			n++
		}
	}
	return n
}

func knownString(v cty.Value) (string, bool) {
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// checkJoin refuses a join whose result would be more than maxBuiltString bytes.
func checkJoin(args []cty.Value) error {
	sep, _ := knownString(args[0])
	size, n := 0, 0
	for _, list := range args[1:] {
		if !list.IsKnown() || list.IsNull() || !list.CanIterateElements() {
			continue
		}
		for it := list.ElementIterator(); it.Next(); {
			_, el := it.Element()
			if s, ok := knownString(el); ok {
				size += len(s)
			}
			n++
		}
	}
	if n > 1 {
		size += len(sep) * (n - 1)
	}
	if size > maxBuiltString {
		return function.NewArgErrorf(0, "the joined text would be %d bytes: more than %d MiB", size, maxBuiltString>>20)
	}
	return nil
}

// checkReplace refuses a replace whose result would be more than maxBuiltString bytes: the
// occurrences (or a regular expression's matches) times the replacement, which may also
// repeat what a match captured ($1).
func checkReplace(args []cty.Value) error {
	str, ok1 := knownString(args[0])
	substr, ok2 := knownString(args[1])
	repl, ok3 := knownString(args[2])
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	var n, size int
	if len(substr) > 1 && substr[0] == '/' && substr[len(substr)-1] == '/' {
		if steps, ok := regexSteps(substr[1:len(substr)-1], str); ok && steps > maxRegexSteps {
			return function.NewArgErrorf(1, "the pattern over %d bytes of text could take %d steps: more than %d (a simpler pattern, or less text)", len(str), steps, maxRegexSteps)
		}
		re, err := regexp.Compile(substr[1 : len(substr)-1])
		if err != nil {
			return nil // replace reports it
		}
		n = len(re.FindAllStringIndex(str, maxBuiltString+1))
		size = len(str) + n*len(repl) + strings.Count(repl, "$")*len(str)
	} else {
		if substr == "" {
			n = utf8.RuneCountInString(str) + 1
		} else {
			n = strings.Count(str, substr)
		}
		size = len(str) + n*(len(repl)-len(substr))
	}
	if size > maxBuiltString {
		return function.NewArgErrorf(2, "the result would be more than %d MiB: %d replacements of %d bytes", maxBuiltString>>20, n, len(repl))
	}
	return nil
}

// checkSplit refuses a split into more than maxBuiltElements elements.
func checkSplit(args []cty.Value) error {
	sep, ok1 := knownString(args[0])
	str, ok2 := knownString(args[1])
	if !ok1 || !ok2 {
		return nil
	}
	n := 1
	if sep == "" {
		n = utf8.RuneCountInString(str)
	} else {
		n += strings.Count(str, sep)
	}
	if n > maxBuiltElements {
		return function.NewArgErrorf(1, "the text splits into %d elements: more than %d", n, maxBuiltElements)
	}
	return nil
}

// checkRegexAll refuses a regexall that could run too long (checkRegexCost) or has more than
// maxBuiltElements matches.
func checkRegexAll(args []cty.Value) error {
	if err := checkRegexCost(args); err != nil {
		return err
	}
	pattern, ok1 := knownString(args[0])
	str, ok2 := knownString(args[1])
	if !ok1 || !ok2 {
		return nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil // regexall reports it
	}
	if n := len(re.FindAllStringIndex(str, maxBuiltElements+1)); n > maxBuiltElements {
		return function.NewArgErrorf(1, "the text has more than %d matches", maxBuiltElements)
	}
	return nil
}

// checkJSONEncode refuses a value whose JSON would be more than maxBuiltString bytes.
func checkJSONEncode(args []cty.Value) error {
	if size := textSize(args[0], maxBuiltString); size > maxBuiltString {
		return function.NewArgErrorf(0, "the JSON would be more than %d MiB", maxBuiltString>>20)
	}
	return nil
}

// checkFormatArgs refuses a format whose verbs, each writing one of its arguments, would make
// more than maxBuiltString bytes, times the elements for formatlist: an argument may be used by
// every verb (%[1]s%[1]s…).
func checkFormatArgs(args []cty.Value, times int) error {
	format, ok := knownString(args[0])
	if !ok {
		return nil
	}
	verbs := strings.Count(format, "%") - 2*strings.Count(format, "%%")
	largest := 0
	for _, a := range args[1:] {
		if times > 1 && a.IsKnown() && !a.IsNull() && isSequence(a.Type()) {
			for it := a.ElementIterator(); it.Next(); {
				_, el := it.Element()
				largest = max(largest, textSize(el, maxBuiltString))
			}
			continue
		}
		largest = max(largest, textSize(a, maxBuiltString))
	}
	if size := len(format) + verbs*largest; size > maxBuiltString/times {
		return function.NewArgErrorf(0, "the formatted text would be more than %d MiB", maxBuiltString>>20)
	}
	return nil
}

// checkConcat refuses a concat of more than maxBuiltElements elements in all (the same long
// list given a thousand times is a thousand times as long).
func checkConcat(args []cty.Value) error {
	n := 0
	for _, a := range args {
		if a.IsKnown() && !a.IsNull() && a.CanIterateElements() {
			n += a.LengthInt()
		}
	}
	if n > maxBuiltElements {
		return function.NewArgErrorf(0, "the lists have %d elements together: more than %d", n, maxBuiltElements)
	}
	return nil
}

// checkFlatten refuses a flatten whose result would have more than maxBuiltElements elements.
func checkFlatten(args []cty.Value) error {
	if n := leaves(args[0], maxBuiltElements); n > maxBuiltElements {
		return function.NewArgErrorf(0, "the flattened list would have more than %d elements", maxBuiltElements)
	}
	return nil
}

// leaves counts the elements of v that are not lists, tuples or sets, however deep, stopping
// past limit.
func leaves(v cty.Value, limit int) int {
	if !v.IsKnown() || v.IsNull() {
		return 1
	}
	v, _ = v.Unmark()
	if !isSequence(v.Type()) {
		return 1
	}
	n := 0
	for it := v.ElementIterator(); it.Next() && n <= limit; {
		_, el := it.Element()
		n += leaves(el, limit-n)
	}
	return n
}

// maxPairs bounds the pairs of elements distinct and matchkeys compare one by one when their
// elements cannot be hashed (collections, marked values): go-cty's equality takes about 0.7 µs
// a pair here, and distinct of 5,000 numbers took 17 s before it hashed them.
const maxPairs = 1_000_000

// hashKey is a key equal for two known, unmarked strings, numbers or booleans exactly when
// go-cty's equality says they are; ok is false for any other value.
func hashKey(v cty.Value) (key string, ok bool) {
	if !v.IsKnown() || v.IsNull() || v.IsMarked() {
		return "", false
	}
	switch v.Type() {
	case cty.String:
		return "s" + v.AsString(), true
	case cty.Number:
		return "n" + v.AsBigFloat().Text('p', 0), true // the exact binary value
	case cty.Bool:
		if v.True() {
			return "t", true
		}
		return "f", true
	}
	return "", false
}

// distinctFunc is go-cty's distinct, in linear time for lists of strings, numbers and
// booleans (go-cty's compares every pair), and bounded to maxPairs comparisons otherwise.
var distinctFunc = function.New(&function.Spec{
	Description: stdlib.DistinctFunc.Description(),
	Params:      stdlib.DistinctFunc.Params(),
	Type:        stdlib.DistinctFunc.ReturnTypeForValues,
	RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder {
		return b.NotNull()
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		list := args[0]
		if !list.IsWhollyKnown() || list.LengthInt() < 2 {
			return stdlib.DistinctFunc.Call(args)
		}
		seen := make(map[string]bool, list.LengthInt())
		var out []cty.Value
		for it := list.ElementIterator(); it.Next(); {
			_, el := it.Element()
			key, ok := hashKey(el)
			if !ok {
				if n := list.LengthInt(); n*n > maxPairs {
					return cty.NilVal, function.NewArgErrorf(0, "distinct compares each pair of %d elements that are not strings, numbers or booleans: at most %d pairs", n, maxPairs)
				}
				return stdlib.DistinctFunc.Call(args)
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, el)
			}
		}
		return cty.ListVal(out), nil
	},
})

// maxRegexSteps bounds a regular expression's program size times the text it runs over: Go's
// matcher is linear in the text but steps through the program for every byte in the worst
// case, and regexall("(?:x?){1000}y", <1 MB>) took 22 s. 10^8 steps is under a second; a
// pattern of ordinary size can still run over megabytes.
const maxRegexSteps = 100_000_000

// regexSteps is an upper bound of the steps pattern takes over text: its compiled program's
// size times the text's length. ok is false for a pattern that does not compile (the function
// reports it).
func regexSteps(pattern, text string) (steps int, ok bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, false
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, false
	}
	return len(prog.Inst) * (len(text) + 1), true
}

// checkRegexCost refuses a regex or regexall whose pattern over its text could take more than
// maxRegexSteps.
func checkRegexCost(args []cty.Value) error {
	pattern, ok1 := knownString(args[0])
	text, ok2 := knownString(args[1])
	if !ok1 || !ok2 {
		return nil
	}
	if steps, ok := regexSteps(pattern, text); ok && steps > maxRegexSteps {
		return function.NewArgErrorf(0, "the pattern over %d bytes of text could take %d steps: more than %d (a simpler pattern, or less text)", len(text), steps, maxRegexSteps)
	}
	return nil
}

// JSONSize is about the bytes v takes written out as JSON, at least that many: strings with
// their quotes (escapes not counted), numbers in their digits, keys, and a byte of punctuation
// per element. Marked parts are measured as they are. It stops counting soon after the total
// passes limit, so that a value that repeats one long string many times (a list of references
// to it, a setproduct over it) is measured in the time of limit bytes, not of its length.
func JSONSize(v cty.Value, limit int) int {
	v, _ = v.Unmark()
	switch {
	case !v.IsKnown() || v.IsNull():
		return 4
	case v.Type() == cty.String:
		return len(v.AsString()) + 2
	case v.Type() == cty.Number:
		return len(v.AsBigFloat().Text('g', -1))
	case !v.CanIterateElements():
		return 5
	}
	size := 2
	object := v.Type().IsMapType() || v.Type().IsObjectType()
	for it := v.ElementIterator(); it.Next() && size <= limit; {
		k, e := it.Element()
		if object {
			size += len(k.AsString()) + 3
		}
		size += 1 + JSONSize(e, limit-size)
	}
	return size
}
