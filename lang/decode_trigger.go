package lang

import (
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang/schedule"
)

var triggerTypes = []string{TriggerManual, TriggerSchedule, TriggerWebhook, TriggerPoll}

func (d *decoder) decodeTrigger(b *hcl.Block, names *nameSet) *Trigger {
	t := &Trigger{Type: b.Labels[0], Name: b.Labels[1], DeclRange: b.DefRange}
	sch, ok := triggerSchemas[t.Type]
	if !ok {
		d.add(errorf(b.LabelRanges[0], "Unknown trigger type",
			"%q is not a trigger type; use one of %s.", t.Type, quoteList(triggerTypes)))
		return nil
	}
	d.add(checkName(t.Name, "trigger name", b.LabelRanges[1]))
	d.add(names.add(t.Name, b.DefRange))
	content, diags := b.Body.Content(sch)
	d.add(diags...)
	st, a := &d.static, content.Attributes
	switch t.Type {
	case TriggerSchedule:
		t.Timezone = "UTC"
		zoneOK := true
		if v, ok := st.str(a["timezone"]); ok {
			t.Timezone = v
			// "Local" is the machine's zone, which the file would not say: not a zone name.
			if _, err := time.LoadLocation(v); err != nil || v == "Local" || v == "" {
				zoneOK = false
				d.add(errorf(a["timezone"].Expr.Range(), "Unknown time zone",
					"%q is not an IANA time zone name such as \"UTC\" or \"Europe/Berlin\".", v))
			}
		}
		if v, ok := st.str(a["cron"]); ok {
			t.Cron = v
			tz := t.Timezone
			if !zoneOK {
				tz = "" // reported above; check the expression on its own
			}
			if _, err := schedule.Parse(v, tz); err != nil {
				d.add(errorf(a["cron"].Expr.Range(), "Invalid cron expression",
					"%s. A schedule's cron has 5 fields (minute hour day-of-month month day-of-week), e.g. \"0 9 * * 1-5\".",
					capitalize(err.Error())))
			}
		}
	case TriggerWebhook:
		t.Method, t.MaxBodyBytes = "POST", 1<<20
		if v, ok := st.oneOf(a["method"], "GET", "POST", "PUT", "PATCH", "DELETE"); ok {
			t.Method = v
		}
		if v, ok := st.str(a["path"]); ok {
			t.Path = v
			if !strings.HasPrefix(v, "/") {
				d.add(errorf(a["path"].Expr.Range(), "Invalid webhook path",
					"A webhook path starts with \"/\", e.g. \"/hooks/orders\"; got %q.", v))
			}
		}
		if v, ok := st.size(a["max_body_bytes"]); ok {
			t.MaxBodyBytes = v
		}
		if attr := a["uses"]; attr != nil {
			t.Uses = d.triggerUses(attr)
		}
		for i, ab := range content.Blocks.OfType("auth") {
			if i > 0 {
				d.add(duplicateBlock(ab, "auth"))
				continue
			}
			t.HMAC = d.decodeAuth(ab)
		}
	case TriggerPoll:
		if v, ok := st.positiveDuration(a["interval"]); ok {
			t.Interval = v
			if v < MinPollInterval {
				// A poll every nanosecond kept serve's CPU busy asking.
				d.add(errorf(a["interval"].Expr.Range(), "Invalid interval",
					"A poll trigger's \"interval\" must be at least %s; got %s.", MinPollInterval, v))
			}
		}
		if attr := a["uses"]; attr != nil {
			t.Uses = d.triggerUses(attr)
		}
		if attr := a["dedup_key"]; attr != nil {
			t.DedupKey = attr.Expr
			d.checkRoots(attr.Expr, "dedup_key", "event", "var")
		}
	}
	return t
}

// MinPollInterval is the shortest interval a poll trigger may have.
const MinPollInterval = 100 * time.Millisecond

func (d *decoder) triggerUses(attr *hcl.Attribute) *Uses {
	if tr, diags := hcl.AbsTraversalForExpr(attr.Expr); !diags.HasErrors() && tr.RootName() == "builtin" {
		d.add(errorf(attr.Expr.Range(), "Invalid uses",
			"A trigger's `uses` names a component or plugin trigger: component.LOCAL.TRIGGER or plugin.LOCAL.TRIGGER; builtins are tasks, not triggers."))
		return nil
	}
	u, diag := parseUses(attr.Expr, nil)
	if diag != nil {
		d.add(diag)
		return nil
	}
	if u.Kind == UsesBuiltin {
		d.add(errorf(attr.Expr.Range(), "Invalid uses",
			"A trigger's `uses` names a component or plugin trigger: component.LOCAL.TRIGGER or plugin.LOCAL.TRIGGER."))
		return nil
	}
	return u
}

func (d *decoder) decodeAuth(b *hcl.Block) *HMACAuth {
	content, diags := b.Body.Content(authSchema)
	d.add(diags...)
	hs := content.Blocks.OfType("hmac_sha256")
	if len(hs) == 0 {
		if !diags.HasErrors() {
			d.add(errorf(b.DefRange, "Missing authentication method", "An `auth` block needs an `hmac_sha256 { secret = secret.NAME }` block."))
		}
		return nil
	}
	for _, extra := range hs[1:] {
		d.add(duplicateBlock(extra, "hmac_sha256"))
	}
	hc, diags := hs[0].Body.Content(hmacSchema)
	d.add(diags...)
	h := &HMACAuth{Header: "X-Signature"}
	if attr := hc.Attributes["secret"]; attr != nil {
		h.SecretRange = attr.Expr.Range()
		tr, tdiags := hcl.AbsTraversalForExpr(attr.Expr)
		if tdiags.HasErrors() || len(tr) != 2 || tr.RootName() != "secret" {
			d.add(errorf(attr.Expr.Range(), "Invalid HMAC secret", "`secret` must be a reference to a secret block: secret.NAME."))
		} else if step, ok := tr[1].(hcl.TraverseAttr); ok {
			h.Secret = step.Name
		}
	}
	if v, ok := d.static.str(hc.Attributes["header"]); ok {
		h.Header = v
	}
	return h
}

// checkRoots reports references in expr whose root is not one of allowed.
func (d *decoder) checkRoots(expr hcl.Expression, attr string, allowed ...string) {
	_, foreign := splitRoots(expr, allowed...)
	for _, tr := range foreign {
		d.add(errorf(tr.SourceRange(), "Invalid reference",
			"%q can only refer to %s here, not %s.", attr, strings.Join(allowed, " and "), tr.RootName()))
	}
}

// capitalize upper-cases the first letter of a message that is used to start a sentence.
func capitalize(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
