package jsstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/nats-io/nats.go/jetstream"
)

func newKey(t *testing.T) *clusterkey.Key {
	t.Helper()
	raw := make([]byte, clusterkey.Size)
	rand.Read(raw)
	k, err := clusterkey.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fixture is a NATS server with the two buckets made as the coordinator makes them.
type fixture struct {
	srv *natstest.Server
	js  jetstream.JetStream
	key *clusterkey.Key
}

const (
	kvBucket        = "fuscia_kv"
	artifactsBucket = "fuscia_artifacts"
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := natstest.Start(t)
	js, err := jetstream.New(natstest.Connect(t, srv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if _, err := js.CreateKeyValue(ctx, KVConfig(kvBucket, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateObjectStore(ctx, ArtifactsConfig(artifactsBucket, 1)); err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, js: js, key: newKey(t)}
}

func (f *fixture) kv(t *testing.T, key *clusterkey.Key) *KV {
	t.Helper()
	kv, err := OpenKV(testCtx(t), f.js, kvBucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func (f *fixture) artifacts(t *testing.T, key *clusterkey.Key) *Artifacts {
	t.Helper()
	a, err := OpenArtifacts(testCtx(t), f.js, artifactsBucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// filesContaining returns the files under dir that contain s.
func filesContaining(t *testing.T, dir string, s []byte) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, s) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
