// Command kvcounter is the fuscia/kvcounter component: counters kept in the host's key-value
// store, as decimal text. The optional config key "prefix" is put before every key.
//
// Build it with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o component.wasm .
package main

import (
	"strconv"

	"github.com/fuscia/fuscia/hostabi/guest"
)

// main is not called: the component is a WASI reactor, and its handlers are registered in init.
func main() {}

func init() {
	guest.Task("incr", incr)
	guest.Task("get", get)
	guest.Task("reset", reset)
}

type incrInput struct {
	Key string `json:"key"`
	// By is how much to add; 1 when absent.
	By *int64 `json:"by"`
}

type keyInput struct {
	Key string `json:"key"`
}

// counter is every task's output.
type counter struct {
	Key   string `json:"key"`
	Value int64  `json:"value"`
}

// incr adds by to the counter key and returns its new value.
func incr(_ guest.Context, in incrInput) (guest.Result, error) {
	if in.Key == "" {
		return guest.Result{}, guest.Validation("key must not be empty")
	}
	by := int64(1)
	if in.By != nil {
		by = *in.By
	}
	v, err := load(in.Key)
	if err != nil {
		return guest.Result{}, err
	}
	v += by
	guest.KV.Set(storageKey(in.Key), strconv.FormatInt(v, 10))
	guest.Infof("counter %q: %d (+%d)", in.Key, v, by)
	return guest.Success(counter{Key: in.Key, Value: v}), nil
}

// get returns the counter key, 0 when it was never set.
func get(_ guest.Context, in keyInput) (guest.Result, error) {
	if in.Key == "" {
		return guest.Result{}, guest.Validation("key must not be empty")
	}
	v, err := load(in.Key)
	if err != nil {
		return guest.Result{}, err
	}
	return guest.Success(counter{Key: in.Key, Value: v}), nil
}

// reset deletes the counter key.
func reset(_ guest.Context, in keyInput) (guest.Result, error) {
	if in.Key == "" {
		return guest.Result{}, guest.Validation("key must not be empty")
	}
	guest.KV.Delete(storageKey(in.Key))
	guest.Infof("counter %q: reset", in.Key)
	return guest.Success(counter{Key: in.Key, Value: 0}), nil
}

// load reads the counter key; a value that is not a decimal integer is a fatal error, since
// another attempt would find the same.
func load(key string) (int64, error) {
	s, ok := guest.KV.Get(storageKey(key))
	if !ok {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, guest.Fatal("counter %q holds %q, not a decimal integer", key, s)
	}
	return v, nil
}

// storageKey is key with the configured prefix.
func storageKey(key string) string {
	prefix, _ := guest.Config("prefix")
	return prefix + key
}
