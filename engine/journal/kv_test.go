package journal

import (
	"strings"
	"testing"
)

func TestKV(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	scope := ExecutionScope("01KV")
	if _, ok, err := s.KVGet(scope, "k"); ok || err != nil {
		t.Fatalf("empty store: %v, %v", ok, err)
	}
	if err := s.KVSet(scope, "k", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := s.KVSet(scope, "empty", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.KVSet(TriggerScope("w", "tick"), "k", []byte("trigger")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.KVGet(scope, "k"); !ok || err != nil || string(v) != "v1" {
		t.Fatalf("get: %q, %v, %v", v, ok, err)
	}
	if v, ok, _ := s.KVGet(scope, "empty"); !ok || len(v) != 0 {
		t.Fatalf("an empty value must exist: %q, %v", v, ok)
	}
	if _, _, err := s.KVGet("bad/scope", "k"); err == nil || !strings.Contains(err.Error(), "invalid kv scope") {
		t.Fatalf("bad scope: %v", err)
	}

	// Synced writes survive a reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	defer closeStore(t, s)
	if v, ok, _ := s.KVGet(scope, "k"); !ok || string(v) != "v1" {
		t.Fatalf("after reopen: %q, %v", v, ok)
	}
	if err := s.KVDelete(scope, "k"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.KVGet(scope, "k"); ok {
		t.Fatal("deleted key is still there")
	}

	// Deleting an execution deletes its scope, not a trigger's.
	if err := s.Delete("01KV"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.KVGet(scope, "empty"); ok {
		t.Fatal("the execution's KV outlived it")
	}
	if v, ok, _ := s.KVGet(TriggerScope("w", "tick"), "k"); !ok || string(v) != "trigger" {
		t.Fatalf("trigger KV: %q, %v", v, ok)
	}
}
