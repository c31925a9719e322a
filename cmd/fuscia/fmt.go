package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

func runFmt(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "fmt", "fmt [-check] [-diff] [PATH…]")
	check := fs.Bool("check", false, "change nothing; exit 3 when a file is not formatted")
	diff := fs.Bool("diff", false, "print the changes as a unified diff")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	files, err := collectFiles(paths, workflowExt, testFileExt)
	if err != nil {
		return c.fail(false, "No workflows to format", sentenceOf(err))
	}
	var diags hcl.Diagnostics
	files2 := map[string]*hcl.File{}
	changed := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return c.operationFailed("Cannot read "+f, err)
		}
		out, fdiags := lang.Format(f, src)
		files2[f] = &hcl.File{Bytes: src}
		if fdiags.HasErrors() {
			diags = append(diags, fdiags...)
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		changed++
		fmt.Fprintln(c.stdout, f)
		if *diff {
			fmt.Fprint(c.stdout, lang.UnifiedDiff(f, src, out))
		}
		if !*check {
			if err := os.WriteFile(f, out, 0o644); err != nil {
				return c.operationFailed("Cannot write "+f, err)
			}
		}
	}
	writeDiags(c.stderr, files2, diags)
	switch {
	case diags.HasErrors():
		return exitInvalid
	case *check && changed > 0:
		return exitWithErrs
	}
	return exitOK
}
