package schema

import (
	"testing"
)

// sameAsDecodeJSON fails t unless ParseJSON gives what encoding/json and FromJSON give.
func sameAsDecodeJSON(t *testing.T, data []byte) {
	t.Helper()
	got, gotErr := ParseJSON(data)
	want, wantErr := decodeDocument(data)
	if (gotErr != nil) != (wantErr != nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%q: error %v; the long way's %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !got.RawEquals(want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
	}
}

var parseCases = []string{
	`{}`, ` { } `, `[]`, `[ ]`, `null`, `true`, `false`, `0`, `-0`, `1.50`, `-12e-3`, `1E+400`, `123456789012345678901234567890`,
	`"plain"`, `"caf\u00e9 \"q\" \\ \/ \n \ud83d\ude00"`, `"\ud800"`, `"é ü 漢字"`, "\"\xff\xfe\"", "\"a\x01b\"",
	`{"method":"POST","path":"/hooks/in","query":{"a":"1 \u0026 2"},"headers":{"Content-Type":"application/json","User-Agent":"wrk"},"body":{"id":42,"tags":["x","y"],"nested":{"deep":[1,[2,[3]]]}}}`,
	`{"a":1,"a":2}`, `{"a":{"b":null},"c":[true,false,null,{}]}`,
	`{} trailing`, `1 2`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `[`, `{`, `"`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, ``, `  `,
	"{\"a\":1}\n", "\t[1]\r\n",
}

func TestParseJSONMatches(t *testing.T) {
	for _, c := range parseCases {
		sameAsDecodeJSON(t, []byte(c))
	}
}

// TestParseJSONDirect: the usual documents are parsed directly, not the long way (which would
// give the same values, only slower, so TestParseJSONMatches would not notice).
func TestParseJSONDirect(t *testing.T) {
	for _, c := range []string{
		`{"method":"POST","path":"/hooks/in","query":{},"headers":{"Accept":"*/*","X-Req":"a \u003c b"},"body":{"id":1,"ok":true,"n":null}}`,
		`[1, -2.5e3, "x", [], {}]`,
		`"caf\u00e9"`,
	} {
		p := parser{data: []byte(c)}
		p.space()
		if _, ok := p.value(0); !ok || p.i != len(c) {
			t.Errorf("%s: not parsed directly (stopped at byte %d of %d)", c, p.i, len(c))
		}
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsDecodeJSON(t, data)
	})
}
