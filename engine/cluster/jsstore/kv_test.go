package jsstore

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/task"
)

var _ task.KVStore = (*KV)(nil)

func mustSet(t *testing.T, kv *KV, scope, key, value string) {
	t.Helper()
	if err := kv.KVSet(scope, key, []byte(value)); err != nil {
		t.Fatalf("KVSet(%q, %q): %v", scope, key, err)
	}
}

// want checks the value of key in scope; "" with found false means absent.
func want(t *testing.T, kv *KV, scope, key string, value string, found bool) {
	t.Helper()
	v, ok, err := kv.KVGet(scope, key)
	if err != nil {
		t.Fatalf("KVGet(%q, %q): %v", scope, key, err)
	}
	if ok != found || string(v) != value {
		t.Errorf("KVGet(%q, %q) = %q, %v; want %q, %v", scope, key, v, ok, value, found)
	}
}

// TestKVRoundTrip: values come back, scopes do not see each other's keys, and any bytes work
// as scope and key (dots, wildcards, empty, long).
func TestKVRoundTrip(t *testing.T) {
	f := newFixture(t)
	kv := f.kv(t, f.key)
	x1, x2, trig := journal.ExecutionScope("run-1"), journal.ExecutionScope("run-2"), journal.TriggerScope("wf", "trigger")

	want(t, kv, x1, "k", "", false)
	mustSet(t, kv, x1, "k", "one")
	mustSet(t, kv, x2, "k", "two")
	mustSet(t, kv, trig, "k", "trigger's")
	want(t, kv, x1, "k", "one", true)
	want(t, kv, x2, "k", "two", true)
	want(t, kv, trig, "k", "trigger's", true)

	mustSet(t, kv, x1, "k", "one again")
	want(t, kv, x1, "k", "one again", true)
	if err := kv.KVDelete(x1, "k"); err != nil {
		t.Fatal(err)
	}
	want(t, kv, x1, "k", "", false)
	want(t, kv, x2, "k", "two", true)
	if err := kv.KVDelete(x1, "never set"); err != nil {
		t.Errorf("deleting an absent key: %v", err)
	}

	for _, key := range []string{"", "a.b", "*", ">", "a b/c\x00\xff", strings.Repeat("k", 1<<10)} {
		mustSet(t, kv, x1, key, "v:"+key)
		want(t, kv, x1, key, "v:"+key, true)
		want(t, kv, x2, key, "", false)
	}
	mustSet(t, kv, x1, "empty value", "")
	want(t, kv, x1, "empty value", "", true)

	if err := kv.KVSet("", "k", []byte("v")); err == nil || !strings.Contains(err.Error(), "scope") {
		t.Errorf("KVSet with an empty scope: %v, want an error naming the scope", err)
	}
}

// TestKVDeleteScope: DeleteScope removes every key of its scope and nothing else, also not a
// scope whose name starts with the same letters.
func TestKVDeleteScope(t *testing.T) {
	f := newFixture(t)
	kv := f.kv(t, f.key)
	ctx := testCtx(t)
	gone, kept, longer := journal.ExecutionScope("e"), journal.ExecutionScope("f"), journal.ExecutionScope("e1")
	for _, k := range []string{"a", "b", "", "c.d"} {
		mustSet(t, kv, gone, k, "x")
	}
	mustSet(t, kv, kept, "a", "kept")
	mustSet(t, kv, longer, "a", "longer")

	if err := kv.DeleteScope(ctx, gone); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "", "c.d"} {
		want(t, kv, gone, k, "", false)
	}
	want(t, kv, kept, "a", "kept", true)
	want(t, kv, longer, "a", "longer", true)
	if keys, err := kv.scopeKeys(ctx, gone); err != nil || len(keys) != 0 {
		t.Errorf("keys of the deleted scope: %v, %v", keys, err)
	}
	if err := kv.DeleteScope(ctx, journal.ExecutionScope("nothing here")); err != nil {
		t.Errorf("DeleteScope of an empty scope: %v", err)
	}
	if err := kv.DeleteScope(ctx, ""); err == nil {
		t.Error("DeleteScope of the empty scope did not fail")
	}
}

// TestKVOtherKey: a process with another cluster key cannot read a value and says why.
func TestKVOtherKey(t *testing.T) {
	f := newFixture(t)
	mustSet(t, f.kv(t, f.key), "x:run", "k", "sealed")
	_, _, err := f.kv(t, newKey(t)).KVGet("x:run", "k")
	if !errors.Is(err, clusterkey.ErrOtherKey) || !strings.Contains(err.Error(), "same cluster key") {
		t.Errorf("KVGet with another key: %v, want ErrOtherKey and what to do", err)
	}
}

// TestKVValueOverMaxPayload: a value that the NATS servers' max_payload (1 MB by default)
// refuses once sealed gets an error saying which setting to raise.
func TestKVValueOverMaxPayload(t *testing.T) {
	f := newFixture(t)
	err := f.kv(t, f.key).KVSet("x:run", "big", make([]byte, 1<<20))
	if err == nil || !strings.Contains(err.Error(), "max_payload") {
		t.Errorf("KVSet of 1 MiB: %v, want an error naming max_payload", err)
	}
}

// TestKVNATSDown: without NATS a call fails after its timeout instead of hanging the task.
func TestKVNATSDown(t *testing.T) {
	f := newFixture(t)
	kv := f.kv(t, f.key)
	kv.Timeout = 500 * time.Millisecond
	f.srv.Shutdown()
	if _, _, err := kv.KVGet("x:run", "k"); err == nil {
		t.Error("KVGet without NATS did not fail")
	}
	if err := kv.KVSet("x:run", "k", []byte("v")); err == nil {
		t.Error("KVSet without NATS did not fail")
	}
}

// TestSealedAtRest: what KV and Artifacts store is sealed: NATS's store holds neither a KV
// value nor an artifact's bytes, while the same bytes written unsealed are found there (so the
// search would see them).
func TestSealedAtRest(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	secret := "s3cr3t-" + rand.Text()
	control := "in-clear-" + rand.Text()
	mustSet(t, f.kv(t, f.key), "x:run", "token", secret)
	if _, err := f.artifacts(t, f.key).Put(ctx, "run", "text/plain", []byte("artifact "+secret)); err != nil {
		t.Fatal(err)
	}
	raw, err := f.js.KeyValue(ctx, kvBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Put(ctx, "control", []byte(control)); err != nil {
		t.Fatal(err)
	}
	f.srv.Shutdown() // flushes every store file

	if files := filesContaining(t, f.srv.StoreDir(), []byte(control)); len(files) == 0 {
		t.Fatalf("the unsealed control value is in no file under %s: the search sees nothing", f.srv.StoreDir())
	}
	if files := filesContaining(t, f.srv.StoreDir(), []byte(secret)); len(files) != 0 {
		t.Errorf("the secret is in clear text in %v", files)
	}
}
