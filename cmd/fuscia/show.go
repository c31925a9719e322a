package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
)

func runShow(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "show", "show EXECUTION [-json]")
	asJSON := fs.Bool("json", false, "print the execution object as JSON")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	ref, code, ok := c.oneExecution(fs, args, *asJSON)
	if !ok {
		return code
	}
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	x, err := b.Execution(ctx, ref)
	if err != nil {
		return c.executionErr(*asJSON, home, ref, err, "Cannot read the execution")
	}
	if *asJSON {
		if err := writeJSON(c.stdout, x); err != nil {
			return c.operationFailed("Cannot write the execution", err)
		}
		return exitOK
	}
	var out bytes.Buffer
	writeExecution(&out, x, time.Now())
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		return c.operationFailed("Cannot write the execution", err)
	}
	return exitOK
}

// maxListedFailures bounds the failed items or iterations show lists under one node.
const maxListedFailures = 10

// writeExecution renders an execution for people: a header, a line per node, the outputs.
func writeExecution(w io.Writer, x *journal.Execution, now time.Time) {
	fmt.Fprintf(w, "Execution %s\n", x.ID)
	header := [][]string{
		{"Workflow:", x.Workflow},
		{"Status:", x.Status},
		{"Trigger:", x.Trigger.Type + "." + x.Trigger.Name},
		{"Started:", fmtTime(x.StartedAt)},
	}
	if x.FinishedAt != nil {
		header = append(header,
			[]string{"Finished:", fmtTime(*x.FinishedAt)},
			[]string{"Duration:", fmtDuration(x.FinishedAt.Sub(x.StartedAt))})
	} else {
		header = append(header, []string{"Duration:", fmtDuration(now.Sub(x.StartedAt)) + " so far"})
	}
	if x.Parent != nil {
		header = append(header, []string{"Parent:", *x.Parent})
	}
	if x.Error != nil {
		header = append(header, []string{"Error:", fmtError(x.Error)})
	}
	writeTable(w, "  ", header)

	if len(x.Nodes) > 0 {
		fmt.Fprintln(w, "\nNodes:")
		var rows [][]string
		for _, addr := range nodeOrder(x.Nodes) {
			rows = appendNode(rows, "", addr, x.Nodes[addr])
		}
		writeTable(w, "  ", rows)
	}

	if lines := nodeOutputLines(x.Nodes); len(lines) > 0 {
		fmt.Fprintln(w, "\nNode outputs:")
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}

	if outs := outputLines(x.Outputs); len(outs) > 0 {
		fmt.Fprintln(w, "\nOutputs:")
		for _, l := range outs {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if x.Status == journal.StatusInterrupted {
		fmt.Fprintf(w, "\nThe process running this execution ended before it did; nothing runs it now. Continue it with: fuscia resume %s\n", x.ID)
	}
}

// nodeOrder sorts node addresses by when they started (or, for a node that never started,
// finished: a skipped one), then by address; pending nodes come last.
func nodeOrder(nodes map[string]*journal.NodeView) []string {
	at := func(n *journal.NodeView) *time.Time {
		if n.StartedAt != nil {
			return n.StartedAt
		}
		return n.FinishedAt
	}
	addrs := make([]string, 0, len(nodes))
	for a := range nodes {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool {
		ti, tj := at(nodes[addrs[i]]), at(nodes[addrs[j]])
		switch {
		case ti == nil && tj == nil:
			return addrs[i] < addrs[j]
		case ti == nil || tj == nil:
			return tj == nil
		case !ti.Equal(*tj):
			return ti.Before(*tj)
		}
		return addrs[i] < addrs[j]
	})
	return addrs
}

// appendNode adds the row of a node, and rows for its failed items or iterations, indented by
// indent.
func appendNode(rows [][]string, indent, addr string, n *journal.NodeView) [][]string {
	var detail []string
	if len(n.Instances) > 0 {
		detail = append(detail, countStatuses(len(n.Instances), "item", func(i int) string { return n.Instances[i].Status }))
	}
	if len(n.Iterations) > 0 {
		detail = append(detail, countStatuses(len(n.Iterations), "iteration", func(i int) string { return n.Iterations[i].Status }))
	}
	if n.ChildID != "" {
		detail = append(detail, "execution "+n.ChildID)
	}
	if n.Deadline != nil {
		detail = append(detail, "until "+fmtTime(*n.Deadline))
	}
	if n.AnsweredBy != "" {
		detail = append(detail, "answered by "+n.AnsweredBy)
	}
	if n.Error != nil {
		detail = append(detail, fmtError(n.Error))
	} else if n.Reason != "" {
		detail = append(detail, n.Reason)
	}
	rows = append(rows, []string{indent + addr, n.Status, fmtAttempts(n.Attempts), spanOf(n.StartedAt, n.FinishedAt), strings.Join(detail, "; ")})

	sub := indent + "  "
	listed := 0
	for _, in := range n.Instances {
		if !failedStatus(in.Status) {
			continue
		}
		if listed++; listed > maxListedFailures {
			break
		}
		rows = append(rows, []string{sub + "item " + fmtKey(in.Key), in.Status, fmtAttempts(in.Attempts),
			spanOf(in.StartedAt, in.FinishedAt), firstNonEmpty(fmtError(in.Error), in.Reason)})
	}
	for _, it := range n.Iterations {
		if !failedStatus(it.Status) {
			continue
		}
		if listed++; listed > maxListedFailures {
			break
		}
		rows = append(rows, []string{sub + "iteration " + fmtKey(it.Key), it.Status, "", spanOf(it.StartedAt, it.FinishedAt), fmtError(it.Error)})
		// The body nodes that failed say why the iteration did.
		for _, local := range nodeOrder(it.Nodes) {
			if bn := it.Nodes[local]; failedStatus(bn.Status) {
				rows = appendNode(rows, sub+"  ", local, bn)
			}
		}
	}
	failures := 0
	for _, in := range n.Instances {
		if failedStatus(in.Status) {
			failures++
		}
	}
	for _, it := range n.Iterations {
		if failedStatus(it.Status) {
			failures++
		}
	}
	if failures > maxListedFailures {
		rows = append(rows, []string{fmt.Sprintf("%s… and %d more", sub, failures-maxListedFailures)})
	}
	return rows
}

func failedStatus(s string) bool {
	switch s {
	case journal.StatusFailed, journal.StatusTimedOut, journal.StatusCancelled, journal.StatusCompletedWithErrors:
		return true
	}
	return false
}

// statusOrder is the order of the counts in "10 items: 9 succeeded, 1 failed".
var statusOrder = []string{
	journal.StatusSucceeded, journal.StatusCompletedWithErrors, journal.StatusFailed, journal.StatusTimedOut,
	journal.StatusCancelled, journal.StatusSkipped, journal.StatusRunning, journal.StatusWaiting, journal.StatusPending,
}

// countStatuses summarises n items or iterations by status: "10 items: 9 succeeded, 1 failed".
func countStatuses(n int, noun string, status func(int) string) string {
	counts := map[string]int{}
	for i := range n {
		counts[status(i)]++
	}
	var others []string
	for s := range counts {
		if !slices.Contains(statusOrder, s) {
			others = append(others, s)
		}
	}
	sort.Strings(others)
	var parts []string
	for _, s := range append(slices.Clone(statusOrder), others...) {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	if n != 1 {
		noun += "s"
	}
	return fmt.Sprintf("%d %s: %s", n, noun, strings.Join(parts, ", "))
}

// outputLines renders the workflow's outputs as sorted `name = value` lines, values as compact
// JSON.
func outputLines(raw json.RawMessage) []string {
	var outs map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &outs) != nil {
		return nil
	}
	names := make([]string, 0, len(outs))
	for n := range outs {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := make([]string, 0, len(names))
	for _, n := range names {
		lines = append(lines, n+" = "+compactJSON(outs[n]))
	}
	return lines
}

// maxShownOutput bounds a node's output as show prints it for people; show -json has it whole.
const maxShownOutput = 200

// nodeOutputLines are "ADDR = JSON" for the nodes that have an output, in nodeOrder, each cut
// to maxShownOutput bytes (at a character boundary) with "…".
func nodeOutputLines(nodes map[string]*journal.NodeView) []string {
	var lines []string
	for _, addr := range nodeOrder(nodes) {
		n := nodes[addr]
		if len(n.Output) == 0 || string(n.Output) == "null" {
			continue
		}
		s := compactJSON(n.Output)
		if len(s) > maxShownOutput {
			cut := maxShownOutput
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut] + "…"
		}
		lines = append(lines, addr+" = "+s)
	}
	return lines
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func fmtKey(key json.RawMessage) string {
	if len(key) == 0 {
		return "?"
	}
	return compactJSON(key)
}

func fmtError(e *outcome.Error) string {
	if e == nil {
		return ""
	}
	return string(e.Kind) + ": " + e.Message
}

func fmtAttempts(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// spanOf is the duration between two times when both are known.
func spanOf(start, end *time.Time) string {
	if start == nil || end == nil {
		return ""
	}
	return fmtDuration(end.Sub(*start))
}

// fmtTime shows a time in the local zone, to the second.
func fmtTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") }

// fmtDuration rounds a duration to what a person reads: 120ms, 2.1s, 3m4s, 2h3m.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// writeTable writes rows with their columns aligned, each line after indent, without trailing
// blanks.
func writeTable(w io.Writer, indent string, rows [][]string) {
	rows = escapedRows(rows)
	var widths []int
	for _, r := range rows {
		for i, cell := range r {
			if i == len(r)-1 {
				break // the last cell is not padded: a long message does not widen the table
			}
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		b.WriteString(indent)
		for i, cell := range r {
			b.WriteString(cell)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(cell))+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// escapedRows is rows with each cell's control characters escaped (terminalText): a cell comes
// from a file name, a plugin's answer or a run's error, and must neither move the cursor nor
// break the table.
func escapedRows(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, cell := range r {
			out[i][j] = terminalText(cell)
		}
	}
	return out
}

// terminalText is s with every rune that is not printable (ANSI escapes, newlines, other
// control characters) written as a Go escape, as `\x1b`; s itself when it has none.
func terminalText(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}
