package lang

import "testing"

// TestBlockSchemasCoverNestedBlocks fails when a schema accepts a block type whose body has no
// entry in BlockSchemas, so editors would not know what it holds.
func TestBlockSchemasCoverNestedBlocks(t *testing.T) {
	all := BlockSchemas()
	for key, s := range all {
		for _, b := range s.Blocks {
			if b.Type == "trigger" {
				for _, typ := range triggerTypes {
					if all["trigger."+typ] == nil {
						t.Errorf("BlockSchemas has no trigger.%s", typ)
					}
				}
				continue
			}
			if all[b.Type] == nil {
				t.Errorf("%q holds %q blocks, which BlockSchemas has no schema for", key, b.Type)
			}
		}
	}
	// The copies are the caller's: changing one leaves decoding alone.
	all["task"].Attributes[0].Name = "changed"
	if nodeSchemas[KindTask].Attributes[0].Name == "changed" {
		t.Error("BlockSchemas returned the decoder's own schema")
	}
}
