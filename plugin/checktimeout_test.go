package plugin_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/syncbuf"
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

// TestStdoutFloodDoesNotBlock: a task that writes 1 MiB without a newline to its process's
// stdout (fd 1) finishes: the host keeps reading the pipe after a line too long for go-plugin's
// scanner, which stopped reading it (the task blocked until its timeout).
func TestStdoutFloodDoesNotBlock(t *testing.T) {
	bin := plugintest.Build(t, "plugin/testdata/stdoutflood", "stdoutflood")
	tg := target(t, plugintest.Install(t, bin, t.TempDir(), "fuscia-plugin-stdoutflood"), "stdoutflood", "")
	var logs syncbuf.Buffer
	m := newManager(t, plugin.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 2 { // the second call writes after the pipe's reader met the long line
		resp, err := execute(t, ctx, m, tg, "flood", "{}", nil)
		if err != nil || string(resp.GetOutput()) != `{"flooded":true}` {
			t.Fatalf("call %d: %v, %v; want the task's output", i+1, resp, err)
		}
	}
	// The short line before the flood is logged as a warning (docs/reference/plugin-protocol.md).
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `level=WARN msg="plugin wrote to stdout after the handshake"`) || !strings.Contains(logs.String(), `line="hello from fd 1"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no warning with the line written to stdout:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
