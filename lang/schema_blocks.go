package lang

import "github.com/hashicorp/hcl/v2"

// The block schemas of docs/reference/language.md. HCL's Body.Content rejects anything not listed here with
// "Unsupported argument" / "Unsupported block type" (and a "Did you mean" hint), which is what
// makes decoding strict.

var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "workflow", LabelNames: []string{"name"}},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "secret", LabelNames: []string{"name"}},
		{Type: "component", LabelNames: []string{"name"}},
		{Type: "plugin", LabelNames: []string{"name"}},
		{Type: "trigger", LabelNames: []string{"type", "name"}},
		{Type: "task", LabelNames: []string{"name"}},
		{Type: "switch", LabelNames: []string{"name"}},
		{Type: "join", LabelNames: []string{"name"}},
		{Type: "loop", LabelNames: []string{"name"}},
		{Type: "wait", LabelNames: []string{"name"}},
		{Type: "call", LabelNames: []string{"name"}},
		{Type: "output", LabelNames: []string{"name"}},
	},
}

var workflowSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "timeout"},
		{Name: "max_duration"},
		{Name: "max_parallel"},
		{Name: "max_concurrent_runs"},
		{Name: "on_overlap"},
		{Name: "durability"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "retry"}, {Type: "data"}},
}

var retrySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "attempts", Required: true},
		{Name: "backoff"},
		{Name: "initial_delay"},
		{Name: "max_delay"},
	},
}

var dataSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "max_node_output"},
		{Name: "max_total"},
		{Name: "on_exceed"},
	},
}

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
		{Name: "sensitive"},
	},
}

var secretSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "env"},
		{Name: "file"},
		{Name: "description"},
	},
}

var componentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "source", Required: true},
		{Name: "version"},
		{Name: "config"},
		{Name: "allowed_hosts"},
		{Name: "allowed_paths"},
		{Name: "max_memory"},
		{Name: "max_fuel"},
	},
}

var pluginSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "source", Required: true},
		{Name: "version"},
		{Name: "config"},
	},
}

var triggerSchemas = map[string]*hcl.BodySchema{
	TriggerManual: {},
	TriggerSchedule: {Attributes: []hcl.AttributeSchema{
		{Name: "cron", Required: true},
		{Name: "timezone"},
	}},
	TriggerWebhook: {
		Attributes: []hcl.AttributeSchema{
			{Name: "method"},
			{Name: "path", Required: true},
			{Name: "max_body_bytes"},
			{Name: "uses"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "auth"}},
	},
	TriggerPoll: {Attributes: []hcl.AttributeSchema{
		{Name: "interval", Required: true},
		{Name: "uses", Required: true},
		{Name: "dedup_key"},
	}},
}

var authSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "hmac_sha256"}}}

var hmacSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "secret", Required: true},
		{Name: "header"},
	},
}

var outputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "value", Required: true},
		{Name: "description"},
		{Name: "sensitive"},
	},
}

// commonNodeAttrs are accepted by every node kind.
var commonNodeAttrs = []hcl.AttributeSchema{
	{Name: "after"},
	{Name: "depends_on"},
	{Name: "when"},
	{Name: "timeout"},
	{Name: "fail_workflow"},
}

func nodeSchema(attrs []hcl.AttributeSchema, blocks ...hcl.BlockHeaderSchema) *hcl.BodySchema {
	s := &hcl.BodySchema{
		Attributes: append(append([]hcl.AttributeSchema(nil), commonNodeAttrs...), attrs...),
		Blocks:     append([]hcl.BlockHeaderSchema{{Type: "retry"}}, blocks...),
	}
	return s
}

var nodeSchemas = map[NodeKind]*hcl.BodySchema{
	KindTask: nodeSchema([]hcl.AttributeSchema{
		{Name: "uses", Required: true},
		{Name: "inputs"},
		{Name: "for_each"},
		{Name: "concurrency"},
		{Name: "max_iterations"},
		{Name: "pool"},
	}),
	KindSwitch: nodeSchema(nil,
		hcl.BlockHeaderSchema{Type: "case", LabelNames: []string{"key"}},
		hcl.BlockHeaderSchema{Type: "default", LabelNames: []string{"key"}},
	),
	KindJoin: nodeSchema([]hcl.AttributeSchema{
		{Name: "strategy"},
		{Name: "m"},
		{Name: "merge"},
	}),
	KindLoop: nodeSchema([]hcl.AttributeSchema{
		{Name: "for_each", Required: true},
		{Name: "mode"},
		{Name: "concurrency"},
		{Name: "on_failure"},
		{Name: "output"},
	},
		hcl.BlockHeaderSchema{Type: "task", LabelNames: []string{"name"}},
		hcl.BlockHeaderSchema{Type: "switch", LabelNames: []string{"name"}},
		hcl.BlockHeaderSchema{Type: "join", LabelNames: []string{"name"}},
		// Accepted by the schema only to reject them with a message that says what to do instead.
		hcl.BlockHeaderSchema{Type: "loop", LabelNames: []string{"name"}},
		hcl.BlockHeaderSchema{Type: "wait", LabelNames: []string{"name"}},
		hcl.BlockHeaderSchema{Type: "call", LabelNames: []string{"name"}},
	),
	KindWait: nodeSchema([]hcl.AttributeSchema{
		{Name: "duration"},
		{Name: "until"},
	},
		hcl.BlockHeaderSchema{Type: "approval"},
		hcl.BlockHeaderSchema{Type: "callback"},
	),
	KindCall: nodeSchema([]hcl.AttributeSchema{
		{Name: "workflow", Required: true},
		{Name: "inputs"},
		{Name: "on_failure"},
	}),
}

var caseSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "when", Required: true}}}

var approvalSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "message"}}}
