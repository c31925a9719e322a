package plugin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// TestCheckCallsBounded: a plugin that never answers GetSchema, Configure or ValidateInput (and
// ignores the deadline) makes each fail within Options.CheckTimeout with a timeout that names
// the call and says what to do; the process is then killed (target's cleanup checks none is
// left). Before, nothing bounded them, and validate, plan and apply waited for good.
func TestCheckCallsBounded(t *testing.T) {
	bin := plugintest.Build(t, "plugin/testdata/hangcheck", "hangcheck")
	dir := t.TempDir()
	schema := target(t, plugintest.Install(t, bin, dir, "fuscia-plugin-hangschema"), "hangschema", "")
	// One process for each call: the first timeout's kill must not meet the next call.
	config := target(t, plugintest.Install(t, bin, dir, "fuscia-plugin-hangconfig"), "hangconfig", "")
	validate := target(t, plugintest.Install(t, bin, dir, "fuscia-plugin-hangvalidate"), "hangvalidate", "")
	m := newManager(t, plugin.Options{CheckTimeout: 300 * time.Millisecond, GracePeriod: 100 * time.Millisecond})
	ctx := context.Background()
	for _, c := range []struct {
		what string
		call func() error
	}{
		{"GetSchema", func() error { _, err := m.Schema(ctx, schema); return err }},
		{"Configure", func() error { _, err := m.Configure(ctx, config, []byte("{}"), nil); return err }},
		{"ValidateInput", func() error {
			_, err := m.ValidateInput(ctx, validate, "t", []byte("{}"), []byte("{}"), nil)
			return err
		}},
	} {
		start := time.Now()
		err := c.call()
		var pe *plugin.Error
		if !errors.As(err, &pe) || pe.Kind != plugin.Timeout || !strings.Contains(pe.Message, "did not answer "+c.what+" within 300ms") {
			t.Errorf("%s of a plugin that never answers: %v; want a timeout naming the call", c.what, err)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s gave up after %s", c.what, took)
		}
	}
}
