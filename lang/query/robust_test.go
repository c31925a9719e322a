package query

import (
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestEveryOffset asks every question at every offset of the fixtures, whole and cut short
// (as a buffer is while it is typed): none may panic, and every range must lie in the text.
func TestEveryOffset(t *testing.T) {
	for _, name := range []string{"orders.fsc.hcl", "orders.fsctest.hcl"} {
		src, _ := fixture(t, name)
		texts := [][]byte{src}
		for cut := 97; cut < len(src); cut += 211 {
			texts = append(texts, src[:cut])
		}
		for i, text := range texts {
			d := NewDoc(name, text)
			step := 1
			if i > 0 {
				step = 3
			}
			for off := 0; off <= len(text); off += step {
				check := func(what string, r hcl.Range) {
					if r.Start.Byte < 0 || r.End.Byte > len(text) || r.Start.Byte > r.End.Byte {
						t.Fatalf("%s (text %d) at %d: range %v outside the text", what, i, off, r)
					}
				}
				for _, c := range Complete(d, off, testEnv) {
					check("Complete", c.Range)
				}
				if h := Hover(d, off, testEnv); h != nil {
					check("Hover", h.Range)
				}
				for _, r := range Definition(d, off) {
					check("Definition", r)
				}
				for _, r := range References(d, off, true) {
					check("References", r)
				}
				if r, ok := PrepareRename(d, off); ok {
					check("PrepareRename", r)
					if _, err := Rename(d, off, "renamed_x"); err != nil {
						t.Fatalf("text %d at %d: PrepareRename accepted, Rename failed: %v", i, off, err)
					}
				}
			}
			Symbols(d)
		}
	}
}

func TestOutOfRangeOffsets(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	d := NewDoc("orders.fsc.hcl", src)
	for _, off := range []int{-1, len(src) + 1, 1 << 30} {
		if Complete(d, off, nil) != nil || Hover(d, off, nil) != nil || Definition(d, off) != nil || References(d, off, true) != nil {
			t.Errorf("offset %d: got an answer outside the text", off)
		}
		if _, ok := PrepareRename(d, off); ok {
			t.Errorf("offset %d: PrepareRename accepted", off)
		}
	}
	for _, text := range [][]byte{nil, []byte("\x00\x01binary"), []byte("task \"x\" {\n  uses = \n")} {
		d := NewDoc("x.fsc.hcl", text)
		for off := 0; off <= len(text); off++ {
			Complete(d, off, nil)
			Hover(d, off, nil)
			Definition(d, off)
			References(d, off, true)
			PrepareRename(d, off)
		}
		Symbols(d)
	}
}

// TestConcurrentQueries asks questions about one Doc from several goroutines; with -race it
// fails if building the cached analyses is not safe.
func TestConcurrentQueries(t *testing.T) {
	src, _ := fixture(t, "orders.fsc.hcl")
	d := NewDoc("orders.fsc.hcl", src)
	off := at(t, src, `length(task.fe|tch.output`)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			if len(Complete(d, off, testEnv)) == 0 {
				errs <- "no completion"
			}
			if Hover(d, off, testEnv) == nil {
				errs <- "no hover"
			}
			if len(References(d, off, true)) != 4 {
				errs <- "wrong references"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
