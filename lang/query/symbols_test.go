package query

import (
	"fmt"
	"strings"
	"testing"
)

func writeSymbols(b *strings.Builder, src []byte, syms []Symbol, depth int) {
	kinds := map[SymbolKind]string{SymbolWorkflow: "workflow", SymbolVariable: "variable", SymbolSecret: "secret",
		SymbolTrigger: "trigger", SymbolComponent: "component", SymbolPlugin: "plugin", SymbolNode: "node",
		SymbolOutput: "output", SymbolBlock: "block"}
	for _, s := range syms {
		fmt.Fprintf(b, "%s%s [%s] %q L%d-%d sel=%q\n", strings.Repeat("  ", depth), s.Name, kinds[s.Kind], s.Detail,
			s.Range.Start.Line, s.Range.End.Line, src[s.SelectionRange.Start.Byte:s.SelectionRange.End.Byte])
		writeSymbols(b, src, s.Children, depth+1)
	}
}

func TestSymbols(t *testing.T) {
	for _, name := range []string{"orders.fsc.hcl", "orders.fsctest.hcl"} {
		t.Run(name, func(t *testing.T) {
			src, _ := fixture(t, name)
			var b strings.Builder
			writeSymbols(&b, src, Symbols(NewDoc(name, src)), 0)
			golden(t, "symbols-"+name+".txt", b.String())
		})
	}
}
