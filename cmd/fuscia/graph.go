package main

import (
	"context"

	"github.com/fuscia/fuscia/lang"
)

func runGraph(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "graph", "graph [PATH] [-format dot|mermaid]")
	format := fs.String("format", "dot", "`dot` (Graphviz) or mermaid")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if *format != "dot" && *format != "mermaid" {
		return fs.invalid(false, "Invalid -format", "The graph format is \"dot\" or \"mermaid\"; got \""+*format+"\".")
	}
	file, err := singleWorkflow(paths)
	if err != nil {
		return c.fail(false, "No workflow to draw", sentenceOf(err))
	}
	if err := savedPlanGiven(file); err != nil {
		return c.fail(false, "Saved plan given", sentenceOf(err))
	}
	parser := lang.NewParser()
	w, diags := parser.Load(file, lang.Options{})
	writeDiags(c.stderr, parser.Files(), diags)
	if diags.HasErrors() {
		return exitInvalid
	}
	pic := w.Picture()
	if *format == "mermaid" {
		err = pic.WriteMermaid(c.stdout)
	} else {
		err = pic.WriteDOT(c.stdout, w.Name)
	}
	if err != nil {
		return c.operationFailed("Cannot write the graph", err)
	}
	return exitOK
}
