package schema

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// sameAsPruned fails t unless ParseJSONPaths gives what ParseJSON and Prune give: the same
// value, or the same error.
func sameAsPruned(t *testing.T, data []byte, p *Paths) {
	t.Helper()
	got, gotErr := ParseJSONPaths(data, p)
	want, wantErr := ParseJSON(data)
	if (gotErr != nil) != (wantErr != nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%q: error %v; ParseJSON's %v", data, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if want = p.Prune(want); !got.RawEquals(want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
	}
}

func pathsOf(paths ...string) *Paths {
	p := &Paths{}
	for _, path := range paths {
		if path == "" {
			p.Add()
			continue
		}
		p.Add(strings.Split(path, ".")...)
	}
	return p
}

func TestPathsCovers(t *testing.T) {
	p := pathsOf("body.id", "headers", "body.user.name")
	for path, want := range map[string]bool{
		"body.id": true, "body.id.x": true, "headers": true, "headers.Accept": true,
		"body.user.name": true, "body.user": false, "body": false, "method": false, "body.other": false,
	} {
		if got := p.Covers(slices.Values(strings.Split(path, "."))); got != want {
			t.Errorf("Covers(%s) = %v, want %v", path, got, want)
		}
	}
	if p.Covers(slices.Values([]string(nil))) {
		t.Error("Covers() of a value read in parts = true")
	}
	p.Add("body")
	if !p.Covers(slices.Values([]string{"body", "user"})) || !p.Covers(slices.Values([]string{"body"})) {
		t.Error("a path added whole does not cover what is below it")
	}
	if !pathsOf("").Covers(slices.Values([]string{"anything"})) {
		t.Error("the whole value does not cover a path")
	}
}

var pathCases = []*Paths{
	pathsOf(), pathsOf(""), pathsOf("body.id"), pathsOf("body"), pathsOf("a"), pathsOf("a.b", "c"),
	pathsOf("headers.Content-Type", "query"), pathsOf("body.nested.deep", "body.tags"), pathsOf("café"),
}

func TestParseJSONPathsMatches(t *testing.T) {
	docs := append(parseCases,
		`{"cafe\u0301":2}`, `{"a":"\u12"}`, `{"x":"\q","a":1}`, `{"x":1e1234567,"a":1}`,
		`{"x":"a`+"\x01"+`","a":1}`, `{"x":[1,{"y":[]},"z"],"a":{"b":1,"c":2}}`, `{"x":01,"a":1}`, `{"x":-,"a":1}`,
		`{"x":{"y":1,},"a":1}`, `{"x":[1 2],"a":1}`, `{"a":1,"a":{"b":2}}`, `{"x":nul}`, `{"x":"\ud800"}`,
		"{\"x\":\"\xff\",\"a\":\"\xfe\"}", `{"body":[{"id":1}],"id":2}`, `{"body":null}`, `[{"a":1}]`,
	)
	for _, p := range pathCases {
		for _, d := range docs {
			sameAsPruned(t, []byte(d), p)
		}
	}
}

// TestParseJSONPathsDirect: a webhook's payload read in part is parsed directly, not the long
// way (which gives the same value, only slower, so the test above would not notice).
func TestParseJSONPathsDirect(t *testing.T) {
	doc := `{"method":"POST","path":"/hooks/in","query":{"a":"1 \u0026 2"},"headers":{"Accept":"*/*","X-Req":"a \u003c b \ud83d\ude00"},"body":{"id":1,"ok":true,"n":null,"f":-1.5e+3,"l":[1,[2],{"x":""}]}}`
	for _, p := range pathCases {
		q := parser{data: []byte(doc)}
		if _, ok := q.prunedValue(0, p); !ok || q.i != len(doc) {
			t.Errorf("%v: not parsed directly (stopped at byte %d of %d)", p, q.i, len(doc))
		}
	}
	v, err := ParseJSONPaths([]byte(doc), pathsOf("body.id"))
	if err != nil {
		t.Fatal(err)
	}
	want := cty.ObjectVal(map[string]cty.Value{"body": cty.ObjectVal(map[string]cty.Value{"id": cty.NumberIntVal(1)})})
	if !v.RawEquals(want) {
		t.Fatalf("got %#v, want %#v", v, want)
	}
}

// TestParseJSONPathsRandom compares the two ways over random documents, with random damage, and
// random paths.
func TestParseJSONPathsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// "é" written two ways (NFC, NFD) names one attribute in cty. Only one of them is in a
	// document: two members whose names are the same in cty make ParseJSON's value depend on map
	// order (the last one of a repeated name wins only when both are spelled the same).
	names := []string{"a", "b", "body", "id", "é", "x"}
	var gen func(depth int) string
	gen = func(depth int) string {
		switch n := rng.IntN(10); {
		case n < 3 && depth < 4:
			var b strings.Builder
			b.WriteByte('{')
			for i := range rng.IntN(4) {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%q:%s", names[rng.IntN(len(names))], gen(depth+1))
			}
			b.WriteByte('}')
			return b.String()
		case n < 5 && depth < 4:
			var parts []string
			for range rng.IntN(3) {
				parts = append(parts, gen(depth+1))
			}
			return "[" + strings.Join(parts, ", ") + "]"
		case n == 5:
			return []string{`"s"`, `"\n\u00e9"`, `"\x"`, "\"\xff\"", `"`}[rng.IntN(5)]
		case n == 6:
			return []string{"0", "-1.5", "2e10", "1e", "01", "1e9999999"}[rng.IntN(6)]
		default:
			return []string{"true", "false", "null", "nul"}[rng.IntN(4)]
		}
	}
	for i := range 20000 {
		names[4] = []string{"é", "e\u0301"}[i%2]
		doc := []byte(gen(0))
		if rng.IntN(4) == 0 && len(doc) > 0 {
			doc[rng.IntN(len(doc))] = "{}[],:\" x"[rng.IntN(9)]
		}
		p := &Paths{}
		for range rng.IntN(3) {
			var path []string
			for range rng.IntN(3) {
				path = append(path, []string{"a", "b", "body", "id", "é", "e\u0301", "x"}[rng.IntN(7)])
			}
			p.Add(path...)
		}
		sameAsPruned(t, doc, p)
	}
}

func FuzzParseJSONPaths(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c), "body.id")
	}
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		sameAsPruned(t, data, pathsOf(path))
	})
}

// BenchmarkParseJSONPaths is a webhook's payload parsed whole and with only the field fuscia-load's
// hook workflow reads (docs/performance.md, issue 20 item 4, session 24).
func BenchmarkParseJSONPaths(b *testing.B) {
	doc := []byte(`{"method":"POST","path":"/hooks/in","query":{},"headers":{"Content-Length":"12","Content-Type":"application/json","Host":"127.0.0.1:8080","User-Agent":"wrk"},"body":{"id":12345}}`)
	for _, bc := range []struct {
		name  string
		paths *Paths
	}{{"whole", nil}, {"body.id", pathsOf("body.id")}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseJSONPaths(doc, bc.paths); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
