package lang

import "github.com/hashicorp/hcl/v2"

// BlockSchemas returns the body schemas decoding reads, for editors (lang/query completes and
// documents attribute and block names from them, so that it cannot offer one the decoder
// rejects). Keys: "" is the file's top level; a block type names its body ("workflow",
// "task", "retry", "case", "approval", …); "trigger.TYPE" is the body of a trigger of that
// type. A block that is shared (retry in workflow and nodes) has one entry. The map and the
// schemas are copies: the caller may change them.
func BlockSchemas() map[string]*hcl.BodySchema {
	out := map[string]*hcl.BodySchema{
		"":            fileSchema,
		"workflow":    workflowSchema,
		"retry":       retrySchema,
		"data":        dataSchema,
		"variable":    variableSchema,
		"secret":      secretSchema,
		"component":   componentSchema,
		"plugin":      pluginSchema,
		"auth":        authSchema,
		"hmac_sha256": hmacSchema,
		"output":      outputSchema,
		"case":        caseSchema,
		"default":     {},
		"approval":    approvalSchema,
		"callback":    {},
	}
	for typ, s := range triggerSchemas {
		out["trigger."+typ] = s
	}
	for kind, s := range nodeSchemas {
		out[string(kind)] = s
	}
	for k, s := range out {
		out[k] = copySchema(s)
	}
	return out
}

func copySchema(s *hcl.BodySchema) *hcl.BodySchema {
	c := &hcl.BodySchema{
		Attributes: append([]hcl.AttributeSchema(nil), s.Attributes...),
		Blocks:     make([]hcl.BlockHeaderSchema, len(s.Blocks)),
	}
	for i, b := range s.Blocks {
		c.Blocks[i] = hcl.BlockHeaderSchema{Type: b.Type, LabelNames: append([]string(nil), b.LabelNames...)}
	}
	return c
}
