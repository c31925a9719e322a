// Command gendoc writes docs/reference/functions.md from the documentation table of
// lang/funcs. Run it through `go generate ./lang/funcs`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/funcs/internal/refdoc"
)

func main() {
	out := flag.String("o", refdoc.Path, "the file to write")
	flag.Parse()
	if err := os.WriteFile(*out, refdoc.Render(funcs.Docs()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
