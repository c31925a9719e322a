package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/local"
)

// artifactsSubcommands are the subcommands of `fuscia artifacts`, in the order usage lists
// them.
var artifactsSubcommands = []struct {
	name, synopsis string
	run            func(ctx context.Context, c *cli, args []string) int
}{
	{"list", "List the artifacts of an execution", runArtifactsList},
	{"delete", "Delete the artifacts of a finished execution; its record stays", runArtifactsDelete},
	{"get", "Write one artifact of an execution to stdout or a file", runArtifactsGet},
}

func runArtifacts(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, "Error: fuscia artifacts needs a subcommand: list, delete or get.\n\n")
		artifactsUsage(c.stderr)
		return exitInvalid
	}
	switch args[0] {
	case "-help", "--help", "-h", "help":
		artifactsUsage(c.stdout)
		return exitOK
	}
	for _, sub := range artifactsSubcommands {
		if sub.name == args[0] {
			return sub.run(ctx, c, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "Error: unknown subcommand %q of fuscia artifacts.\n\n", args[0])
	artifactsUsage(c.stderr)
	return exitInvalid
}

func artifactsUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: fuscia artifacts SUBCOMMAND -execution ID [options]")
	fmt.Fprintln(w, "\nSubcommands:")
	for _, sub := range artifactsSubcommands {
		fmt.Fprintf(w, "  %-7s %s\n", sub.name, sub.synopsis)
	}
	fmt.Fprintln(w, "\nEvery subcommand takes -help and -home DIR (default $FUSCIA_HOME or ~/.fuscia).")
}

// artifactsExecution returns the execution -execution names; a lone positional argument is
// taken for it too. It reports a missing or doubled one itself (exit 2).
func (c *cli) artifactsExecution(fs *flagSet, flagValue string, args []string, asJSON bool) (string, int, bool) {
	switch {
	case flagValue != "" && len(args) == 0:
		return flagValue, 0, true
	case flagValue == "" && len(args) == 1:
		return args[0], 0, true
	case flagValue == "" && len(args) == 0:
		return "", c.fail(asJSON, "No execution given", "Usage: fuscia "+fs.usage+"\nList executions with: fuscia executions list"), false
	}
	return "", c.fail(asJSON, "Too many arguments", "Usage: fuscia "+fs.usage), false
}

func runArtifactsList(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "artifacts list", "artifacts list -execution ID [-json]")
	execution := fs.String("execution", "", "the execution (`ID`, or a unique prefix of it)")
	asJSON := fs.Bool("json", false, `print {"execution_id", "artifacts": […], "deleted": […]} as JSON`)
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	ref, code, ok := c.artifactsExecution(fs, *execution, args, *asJSON)
	if !ok {
		return code
	}
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	arts, err := b.Artifacts(ctx, ref)
	if err != nil {
		return c.executionErr(*asJSON, home, ref, err, "Cannot list the artifacts")
	}
	if *asJSON {
		if err := writeJSON(c.stdout, arts); err != nil {
			return c.operationFailed("Cannot write the artifacts", err)
		}
		return exitOK
	}
	var out bytes.Buffer
	writeArtifacts(&out, arts)
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		return c.operationFailed("Cannot write the artifacts", err)
	}
	return exitOK
}

// writeArtifacts renders an execution's artifacts for people: a table, then what was deleted.
func writeArtifacts(w io.Writer, a *local.Artifacts) {
	if len(a.Artifacts) == 0 {
		fmt.Fprintf(w, "Execution %s has no artifacts.\n", a.ExecutionID)
	} else {
		rows := [][]string{{"ID", "SIZE", "CONTENT TYPE", "NODE"}}
		for _, x := range a.Artifacts {
			rows = append(rows, []string{x.ID, fmtBytes(x.Size), x.ContentType, firstNonEmpty(x.Node, "-")})
		}
		writeTable(w, "", rows)
	}
	if n := len(a.Deleted); n > 0 {
		var size int64
		var last time.Time
		for _, x := range a.Deleted {
			size += x.Size
			if x.DeletedAt != nil && x.DeletedAt.After(last) {
				last = *x.DeletedAt
			}
		}
		fmt.Fprintf(w, "%s (%s) deleted on %s; the execution keeps their references.\n", countNoun(n, "artifact"), fmtBytes(size), fmtTime(last))
	}
}

func runArtifactsDelete(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "artifacts delete", "artifacts delete -execution ID [-json]")
	execution := fs.String("execution", "", "the execution (`ID`, or a unique prefix of it)")
	asJSON := fs.Bool("json", false, `print {"execution_id", "deleted", "bytes_freed", "shared"} as JSON`)
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	ref, code, ok := c.artifactsExecution(fs, *execution, args, *asJSON)
	if !ok {
		return code
	}
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	d, err := b.DeleteArtifacts(ctx, ref)
	if errors.Is(err, local.ErrNotFinished) {
		fmt.Fprintf(c.stderr, "Error: Execution not finished\n\n%s\n", sentenceOf(err))
		return exitFailed
	}
	if err != nil {
		return c.executionErr(*asJSON, home, ref, err, "Cannot delete the artifacts")
	}
	if *asJSON {
		if err := writeJSON(c.stdout, d); err != nil {
			return c.operationFailed("Cannot write the result", err)
		}
		return exitOK
	}
	fmt.Fprintf(c.stdout, "Deleted %s of execution %s; %s freed.\n", countNoun(d.Deleted, "artifact"), d.ExecutionID, fmtBytes(d.BytesFreed))
	if d.Shared > 0 {
		fmt.Fprintf(c.stdout, "%s kept on disk: another execution has the same content.\n", countNoun(d.Shared, "file"))
	}
	return exitOK
}

func runArtifactsGet(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "artifacts get", "artifacts get -execution ID ARTIFACT_ID [-o FILE]")
	execution := fs.String("execution", "", "the execution (`ID`, or a unique prefix of it; required)")
	outFile := fs.String("o", "", "write the artifact to `FILE` instead of stdout")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if *execution == "" || len(args) != 1 {
		return c.fail(false, "Missing argument", "Say which artifact of which execution: fuscia "+fs.usage+"\nList them with: fuscia artifacts list -execution ID")
	}
	ref, id := *execution, args[0]
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	data, _, err := b.Artifact(ctx, ref, id)
	switch {
	case errors.Is(err, artifact.ErrDeleted):
		fmt.Fprintf(c.stderr, "Error: Artifact deleted\n\nArtifact %s of execution %s was deleted (fuscia artifacts delete); the execution keeps only its reference.\n", id, ref)
		return exitFailed
	case errors.Is(err, artifact.ErrNotFound):
		return c.fail(false, "Unknown artifact",
			fmt.Sprintf("Execution %s has no artifact %q.\nList them with: fuscia artifacts list -execution %s", ref, id, ref))
	case err != nil:
		return c.executionErr(false, home, ref, err, "Cannot read the artifact")
	}
	if *outFile == "" {
		if _, err := c.stdout.Write(data); err != nil {
			return c.operationFailed("Cannot write the artifact", err)
		}
		return exitOK
	}
	if err := os.WriteFile(*outFile, data, 0o644); err != nil {
		return c.operationFailed("Cannot write the artifact", err)
	}
	fmt.Fprintf(c.stderr, "Wrote %s to %s.\n", fmtBytes(int64(len(data))), filepath.Clean(*outFile))
	return exitOK
}

// countNoun is "1 artifact" or "3 artifacts".
func countNoun(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}

// fmtBytes shows a size as people read it: 512 B, 2.0 KiB, 12.3 MiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
