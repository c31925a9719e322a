package engine

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// longJournalJSON and longWireJSON are journalJSON and wireJSON the long way (through any and
// encoding/json), as they were before appendJSON.
func longJournalJSON(v cty.Value) (json.RawMessage, bool, error) {
	x, redacted, err := redactToJSON(v)
	if err != nil {
		return nil, false, err
	}
	b, err := json.Marshal(x)
	return b, redacted, err
}

func longWireJSON(v cty.Value) (json.RawMessage, error) {
	uv, _ := v.UnmarkDeep()
	x, err := schema.ToJSON(uv)
	if err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// TestAppendJSONMatches: journalJSON and wireJSON give the long way's bytes, redaction and
// errors, over random values of every kind cty has (marks, unknowns, nulls, numbers that are
// not whole, strings encoding/json escapes), and appendJSON takes the usual ones itself.
func TestAppendJSONMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", "a", "é", "<&>", "line\nbreak", "\"q\"", "\u2028", "x\x01y", "\xff", "id"}
	nums := []cty.Value{cty.NumberIntVal(0), cty.NumberIntVal(-42), cty.NumberIntVal(1 << 62), cty.NumberFloatVal(1.5),
		cty.NumberVal(new(big.Float).SetFloat64(1e300)), cty.NumberFloatVal(-0.25), cty.PositiveInfinity}
	var gen func(depth int) cty.Value
	gen = func(depth int) cty.Value {
		var v cty.Value
		switch n := rng.IntN(12); {
		case n < 3 && depth < 3:
			attrs := map[string]cty.Value{}
			for range rng.IntN(4) {
				attrs[strs[rng.IntN(len(strs))]] = gen(depth + 1)
			}
			v = cty.ObjectVal(attrs)
		case n == 3 && depth < 3:
			var elems []cty.Value
			for range rng.IntN(3) {
				elems = append(elems, gen(depth+1))
			}
			v = cty.TupleVal(elems)
		case n == 4 && depth < 3:
			elems := map[string]cty.Value{}
			for range 1 + rng.IntN(3) {
				elems[strs[rng.IntN(len(strs))]] = cty.StringVal(strs[rng.IntN(len(strs))])
			}
			v = cty.MapVal(elems)
		case n == 5 && depth < 3:
			v = cty.ListVal([]cty.Value{nums[rng.IntN(len(nums))], nums[rng.IntN(len(nums))]})
		case n == 6:
			v = cty.SetVal([]cty.Value{cty.StringVal(strs[rng.IntN(len(strs))]), cty.StringVal("s")})
		case n == 7:
			v = nums[rng.IntN(len(nums))]
		case n == 8:
			v = []cty.Value{cty.True, cty.False, cty.NullVal(cty.DynamicPseudoType), cty.NullVal(cty.String),
				cty.UnknownVal(cty.String), cty.DynamicVal}[rng.IntN(6)]
		default:
			v = cty.StringVal(strs[rng.IntN(len(strs))])
		}
		if rng.IntN(12) == 0 {
			v = v.Mark(lang.Sensitive)
		}
		return v
	}
	took := 0
	for i := range 20000 {
		v := gen(0)
		if i == 0 {
			v = cty.ObjectVal(map[string]cty.Value{"id": cty.NumberIntVal(12345), "ok": cty.True, "tags": cty.TupleVal([]cty.Value{cty.StringVal("a")})})
		}
		got, gotR, gotErr := journalJSON(v)
		want, wantR, wantErr := longJournalJSON(v)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || string(got) != string(want) || gotR != wantR {
			t.Fatalf("journalJSON(%#v) = %s, %v, %v; the long way %s, %v, %v", v, got, gotR, gotErr, want, wantR, wantErr)
		}
		gotW, gotErr := wireJSON(v)
		wantW, wantErr := longWireJSON(v)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || string(gotW) != string(wantW) {
			t.Fatalf("wireJSON(%#v) = %s, %v; the long way %s, %v", v, gotW, gotErr, wantW, wantErr)
		}
		if _, _, ok := appendJSON(nil, v); ok {
			took++
		} else if i == 0 {
			t.Fatalf("appendJSON leaves %#v to the long way", v)
		}
	}
	if took < 10000 {
		t.Errorf("appendJSON took %d of 20,000 random values itself; the generator makes mostly usual ones", took)
	}
}

// TestValueJSONBounded: a value that repeats one string many times (small in memory) is refused
// before it is written out past MaxValueJSON, by wireJSON (a task's input) and journalJSON,
// allocating about what the bound allows (not a time: under -race on a busy machine writing
// 128 MiB takes anything from 2 to 15 s): one webhook's setproduct over its payload took serve
// to 4 GB and out of memory.
func TestValueJSONBounded(t *testing.T) {
	s := cty.StringVal(strings.Repeat("A", 100_000))
	row := make([]cty.Value, 2_000)
	for i := range row {
		row[i] = s
	}
	big := cty.TupleVal(row) // 200 MB written out
	huge := cty.TupleVal([]cty.Value{big, big, big, big, big, big, big, big, big, big})
	// A fraction first sends the value the long way (appendJSON takes whole numbers only).
	long := cty.TupleVal([]cty.Value{cty.NumberFloatVal(1.5), huge})
	allocated := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.TotalAlloc
	}
	for name, v := range map[string]cty.Value{"200 MB": big, "2 GB": huge, "2 GB the long way": long} {
		before := allocated()
		if _, err := wireJSON(v); err == nil || !strings.Contains(err.Error(), "more than 128 MiB written out as JSON") {
			t.Errorf("wireJSON of %s: %v", name, err)
		}
		if _, _, err := journalJSON(v); err == nil {
			t.Errorf("journalJSON of %s: no error", name)
		}
		// The two writes, their buffers' growth and copies come to about 1.4 GiB (measured);
		// one 2 GB value written out whole would allocate more than 4 GiB.
		if n := allocated() - before; n > 3<<30 {
			t.Errorf("refusing %s allocated %d MiB", name, n>>20)
		}
	}
	if b, err := wireJSON(cty.TupleVal(row[:100])); err != nil || len(b) < 10_000_000 {
		t.Errorf("wireJSON of 10 MB: %d bytes, %v", len(b), err)
	}
}
