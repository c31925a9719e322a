package query

import (
	"sort"
	"testing"

	"github.com/fuscia/fuscia/lang"
)

// TestBlockDocsCoverSchemas fails when lang's decode schemas and the documentation table
// drift: an attribute or a block the decoder accepts without documentation, or documentation
// of an attribute the decoder does not accept.
func TestBlockDocsCoverSchemas(t *testing.T) {
	all := lang.BlockSchemas()
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		s := all[key]
		d, ok := blockDocs()[key]
		if !ok {
			t.Errorf("lang decodes the block %q, which has no entry in blockDocs", key)
			continue
		}
		if key != "" && d.doc == "" {
			t.Errorf("blockDocs()[%q] has no text", key)
		}
		accepted := map[string]bool{}
		for _, a := range s.Attributes {
			accepted[a.Name] = true
			ad, ok := d.attrs[a.Name]
			switch {
			case !ok:
				t.Errorf("the attribute %q of %q is decoded but not documented in blockDocs", a.Name, key)
			case ad.doc == "" || ad.typ == "":
				t.Errorf("blockDocs()[%q].attrs[%q] needs a type and a text", key, a.Name)
			case a.Required != (ad.def == "required"):
				t.Errorf("blockDocs()[%q].attrs[%q]: required is %v in the schema, but the default is %q", key, a.Name, a.Required, ad.def)
			}
		}
		for name := range d.attrs {
			if !accepted[name] {
				t.Errorf("blockDocs()[%q] documents the attribute %q, which lang does not accept", key, name)
			}
		}
		for _, b := range s.Blocks {
			if blockDocs()[b.Type].doc == "" {
				t.Errorf("the block type %q (in %q) has no documentation", b.Type, key)
			}
		}
	}
	for key := range blockDocs() {
		if _, ok := all[key]; !ok && key != "trigger" {
			t.Errorf("blockDocs has %q, which lang does not decode", key)
		}
	}
}
