package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fuscia/fuscia/engine/plan"
)

// workflowExt is the extension of workflow files.
const workflowExt = ".fsc.hcl"

// collectWorkflows expands paths: a file is itself, a directory every *.fsc.hcl below it
// (hidden directories skipped). The result is sorted and without duplicates.
func collectWorkflows(paths []string) ([]string, error) {
	return collectFiles(paths, workflowExt)
}

// testFileExt is the extension of test files (docs/testing.md).
const testFileExt = ".fsctest.hcl"

// collectFiles is collectWorkflows for files ending in any of exts (fmt formats workflows and
// test files alike).
func collectFiles(paths []string, exts ...string) ([]string, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %s", p, describeErr(err))
		}
		if !info.IsDir() {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			continue
		}
		found := 0
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && hasAnySuffix(d.Name(), exts) {
				found++
				if !seen[path] {
					seen[path] = true
					out = append(out, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cannot list %s: %s", p, describeErr(err))
		}
		if found == 0 {
			return nil, fmt.Errorf("no %s files in %s", strings.Join(exts, " or "), p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// singleWorkflow resolves the PATH of graph and plan: a file, or a directory holding exactly
// one workflow file (not counting subdirectories).
func singleWorkflow(args []string) (string, error) {
	if len(args) > 1 {
		return "", fmt.Errorf("expected one workflow file, got %d arguments", len(args))
	}
	p := "."
	if len(args) == 1 {
		p = args[0]
	}
	info, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %s", p, describeErr(err))
	}
	if !info.IsDir() {
		return p, nil
	}
	matches, _ := filepath.Glob(filepath.Join(p, "*"+workflowExt))
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("no %s file in %s; name a workflow file", workflowExt, p)
	default:
		return "", fmt.Errorf("%s holds %d workflow files; name one of them", p, len(matches))
	}
}

func describeErr(err error) string {
	switch {
	case os.IsNotExist(err):
		return "no such file or directory"
	case os.IsPermission(err):
		return "permission denied"
	}
	return err.Error()
}

func hasAnySuffix(name string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(name, x) {
			return true
		}
	}
	return false
}

// savedPlanGiven says which of files is a saved plan (`plan -out`) rather than a workflow, so
// that validate, plan and graph point at apply instead of reporting a file that is not text.
func savedPlanGiven(files ...string) error {
	for _, f := range files {
		if plan.IsPlanFile(f) {
			return fmt.Errorf("the file %s is a plan saved by `fuscia plan -out`, not a workflow file: run it with `fuscia apply %s`, or give the workflow file", f, f)
		}
	}
	return nil
}
