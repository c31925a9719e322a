package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/version"
)

// progress renders a run's events: NDJSON with -json, live lines and bars on a terminal, plain
// lines otherwise.
type progress struct {
	w     io.Writer
	json  bool
	tty   bool
	start time.Time

	mu   sync.Mutex
	bars map[string]*bar // for_each tasks and loops in progress, by node
	// drawn is true while the bottom line of the terminal holds bars, which a new line must
	// first erase.
	drawn bool
	last  time.Time
}

type bar struct {
	node        string
	done, total int
	printed     int // plain output: the last count printed
}

func newProgress(w io.Writer, asJSON bool) *progress { return newProgressAt(w, asJSON, time.Now()) }

// newProgressFor is newProgress made at a run's first event, first: the version line is dated
// no later than it, so that the stream's timestamps do not go back.
func newProgressFor(w io.Writer, asJSON bool, first engine.Event) *progress {
	at := time.Now()
	if !first.Timestamp.IsZero() && first.Timestamp.Before(at) {
		at = first.Timestamp
	}
	return newProgressAt(w, asJSON, at)
}

func newProgressAt(w io.Writer, asJSON bool, at time.Time) *progress {
	p := &progress{w: w, json: asJSON, bars: map[string]*bar{}, start: at}
	if f, ok := w.(*os.File); ok && !asJSON {
		p.tty = term.IsTerminal(int(f.Fd()))
	}
	if asJSON {
		p.writeJSON(map[string]any{"type": "version", "@timestamp": at.UTC(), "fuscia": version.Fuscia, "ui": "1.0"})
	}
	return p
}

func (p *progress) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	p.w.Write(append(b, '\n'))
}

// event is the engine's Observer.
func (p *progress) event(ev engine.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		p.writeJSON(ev)
		return
	}
	switch ev.Type {
	case engine.EventExecutionStarted:
		p.line(fmt.Sprintf("Execution %s started: workflow %q.", ev.ExecutionID, ev.Workflow))
	case engine.EventNodeStarted:
		if len(ev.Index) > 0 {
			return
		}
		msg := ev.Node + ": started"
		if ev.Attempt > 1 {
			msg += fmt.Sprintf(" (attempt %d)", ev.Attempt)
		}
		if ev.Total > 0 {
			p.bars[ev.Node] = &bar{node: ev.Node, total: ev.Total}
			msg += fmt.Sprintf(" (%d %s)", ev.Total, plural(ev.Total, itemWord(ev.Kind)))
		}
		p.line(msg)
	case engine.EventNodeProgress:
		b := p.bars[ev.Node]
		if b == nil {
			b = &bar{node: ev.Node}
			p.bars[ev.Node] = b
		}
		b.done, b.total = ev.Done, ev.Total
		p.drawBars(false)
	case engine.EventNodeRetrying:
		msg := fmt.Sprintf("%s: attempt %d failed (%s)", nodeLabel(ev), ev.Attempt, errText(ev))
		if ev.RetryAt != nil {
			msg += fmt.Sprintf("; retrying in %s", time.Until(*ev.RetryAt).Round(time.Millisecond))
		}
		p.line(msg)
	case engine.EventNodeWaiting:
		msg := ev.Node + ": waiting"
		if ev.Reason != "" {
			msg += " for " + ev.Reason
		}
		if ev.Message != "" {
			msg += fmt.Sprintf(" (%q)", ev.Message)
		}
		if ev.Deadline != nil {
			msg += " until " + ev.Deadline.Format(time.RFC3339)
		}
		if ev.Reason == "approval" || ev.Reason == "callback" {
			msg += fmt.Sprintf("; answer with: fuscia signal %s %s", ev.ExecutionID, ev.Node)
		}
		p.line(msg)
	case engine.EventNodeLog:
		if ev.Level == "debug" {
			return
		}
		p.line(fmt.Sprintf("%s: [%s] %s", nodeLabel(ev), ev.Level, ev.Message))
	case engine.EventNodeFinished:
		delete(p.bars, ev.Node)
		p.line(finishedLine(ev))
	case engine.EventExecutionFinished:
		p.bars = map[string]*bar{}
		p.clearBars()
		p.summary(ev)
	}
}

func itemWord(kind string) string {
	if kind == "loop" {
		return "iteration"
	}
	return "item"
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func nodeLabel(ev engine.Event) string { return instanceLabel(ev.Node, ev.Index) }

func errText(ev engine.Event) string {
	if ev.Error == nil {
		return ""
	}
	if string(ev.Error.Kind) == ev.Status {
		return ev.Error.Message // "task.x: cancelled: why", not "cancelled: cancelled: why"
	}
	return string(ev.Error.Kind) + ": " + ev.Error.Message
}

func finishedLine(ev engine.Event) string {
	msg := nodeLabel(ev) + ": " + ev.Status
	if ev.Duration != nil && ev.Status != journal.StatusSkipped {
		msg += " in " + ev.Duration.String()
	}
	if ev.Attempt > 1 {
		msg += fmt.Sprintf(" after %d attempts", ev.Attempt)
	}
	switch {
	case ev.Reason != "":
		msg += " (" + ev.Reason + ")"
	case ev.Error != nil:
		msg += ": " + errText(ev)
	}
	return msg
}

// line prints one line, above the bars on a terminal.
func (p *progress) line(s string) {
	p.clearBars()
	fmt.Fprintln(p.w, s)
	p.drawBars(true)
}

func (p *progress) clearBars() {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[2K")
		p.drawn = false
	}
}

// drawBars shows the bars: redrawn in place on a terminal (at most 20 times a second), and as a
// plain line every 10% otherwise.
func (p *progress) drawBars(force bool) {
	if len(p.bars) == 0 {
		return
	}
	names := make([]string, 0, len(p.bars))
	for n := range p.bars {
		names = append(names, n)
	}
	sort.Strings(names)
	if !p.tty {
		if force {
			return
		}
		for _, n := range names {
			b := p.bars[n]
			if b.total > 0 && (b.done-b.printed)*10 >= b.total && b.done < b.total {
				b.printed = b.done
				fmt.Fprintf(p.w, "%s: %d/%d\n", b.node, b.done, b.total)
			}
		}
		return
	}
	if !force && time.Since(p.last) < 50*time.Millisecond {
		return
	}
	p.last = time.Now()
	var parts []string
	for _, n := range names {
		parts = append(parts, renderBar(p.bars[n]))
	}
	fmt.Fprint(p.w, "\r\x1b[2K"+strings.Join(parts, "  "))
	p.drawn = true
}

func renderBar(b *bar) string {
	const width = 24
	filled := 0
	if b.total > 0 {
		filled = b.done * width / b.total
	}
	return fmt.Sprintf("%s [%s%s] %d/%d", b.node, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), b.done, b.total)
}

// summary prints the outputs and the run's status at the end.
func (p *progress) summary(ev engine.Event) {
	ex := ev.Execution
	if ex != nil && len(ex.Outputs) > 2 {
		var outs map[string]json.RawMessage
		if json.Unmarshal(ex.Outputs, &outs) == nil && len(outs) > 0 {
			fmt.Fprintln(p.w, "\nOutputs:")
			names := make([]string, 0, len(outs))
			for n := range outs {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(p.w, "  %s = %s\n", n, renderOutput(outs[n]))
			}
		}
	}
	took := time.Since(p.start).Round(time.Millisecond)
	if ex != nil && ex.FinishedAt != nil {
		took = ex.FinishedAt.Sub(ex.StartedAt).Round(time.Millisecond)
	}
	msg := fmt.Sprintf("\nExecution %s %s in %s.", ev.ExecutionID, ev.Status, took)
	if ev.Error != nil && ev.Status != journal.StatusSucceeded {
		msg = fmt.Sprintf("\nExecution %s %s in %s: %s", ev.ExecutionID, ev.Status, took, strings.TrimSuffix(ev.Error.Message, "."))
		msg += "."
	}
	fmt.Fprintln(p.w, msg)
}

// renderOutput shows an output value: JSON, indented when it is large.
func renderOutput(raw json.RawMessage) string {
	if string(raw) == `{"sensitive":true}` {
		return "(sensitive)"
	}
	if len(raw) <= 80 {
		return string(raw)
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}
