// Command text is the fuscia/text component: string utilities, and a few tasks that misbehave
// on purpose (spin, crash, leak, count) to exercise the host's limits in tests.
//
// Build it with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o component.wasm .
package main

import (
	"strings"
	"unicode"

	"github.com/fuscia/fuscia/hostabi/guest"
)

// main is not called: the component is a WASI reactor, and its handlers are registered in init.
func main() {}

func init() {
	guest.Task("upper", upper)
	guest.Task("slugify", slugify)
	guest.Task("words", words)
	guest.Task("spin", spin)
	guest.Task("crash", crash)
	guest.Task("leak", leak)
	guest.Task("count", count)
}

// textInput is the input of upper, slugify and words.
type textInput struct {
	Text string `json:"text"`
}

// upper returns the text in upper case and its length in characters.
func upper(_ guest.Context, in textInput) (guest.Result, error) {
	s := strings.ToUpper(in.Text)
	return guest.Success(map[string]any{"text": s, "length": len([]rune(s))}), nil
}

// slugify returns the text as a URL slug: lower-case letters and digits, runs of anything else
// turned into one "-", none at either end.
func slugify(_ guest.Context, in textInput) (guest.Result, error) {
	return guest.Success(map[string]string{"slug": slug(in.Text)}), nil
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// words splits the text at white space.
func words(_ guest.Context, in textInput) (guest.Result, error) {
	w := strings.Fields(in.Text)
	if w == nil {
		w = []string{}
	}
	return guest.Success(map[string]any{"words": w, "count": len(w)}), nil
}

// spins is written by spin's loop, so that the compiler cannot prove the loop does nothing.
var spins uint64

// spin loops forever: the host's timeout (epoch interruption) must stop it.
func spin(guest.Context, struct{}) (guest.Result, error) {
	for {
		spins++
	}
}

type crashInput struct {
	Message string `json:"message"`
}

// crash panics; the SDK turns the panic into a fatal error with the message.
func crash(_ guest.Context, in crashInput) (guest.Result, error) {
	msg := in.Message
	if msg == "" {
		msg = "crash requested"
	}
	panic(msg)
}

type leakInput struct {
	MiB int `json:"mib"`
}

// leaked keeps leak's memory reachable, so that it cannot be collected or optimised away.
var leaked [][]byte

// leak allocates mib MiB and writes to every page of it: a test of the host's memory cap.
func leak(_ guest.Context, in leakInput) (guest.Result, error) {
	if in.MiB < 0 {
		return guest.Result{}, guest.Validation("mib must not be negative")
	}
	for range in.MiB {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		leaked = append(leaked, b)
	}
	return guest.Success(map[string]int{"mib": in.MiB}), nil
}

// counter counts count's calls in this instance. Every attempt gets a fresh instance, so count
// always answers 1.
var counter int

func count(guest.Context, struct{}) (guest.Result, error) {
	counter++
	return guest.Success(map[string]int{"count": counter}), nil
}
