package natstest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// eventually retries f until it succeeds, for at most 30 s: JetStream answers again once a
// client has reconnected or a new leader is elected.
func eventually(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := f(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after 30 s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond) // a retry's interval
	}
}

func publish(t *testing.T, js jetstream.JetStream, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		// The message id makes a retry of a publish whose ack was lost harmless.
		eventually(t, fmt.Sprintf("publish %d", i), func(ctx context.Context) error {
			_, err := js.Publish(ctx, "t.msg", fmt.Appendf(nil, "m%d", i), jetstream.WithMsgID(fmt.Sprint(i)))
			return err
		})
	}
}

// readAll checks that the stream holds exactly messages m1…mN in order.
func readAll(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	eventually(t, "read the stream", func(ctx context.Context) error {
		st, err := js.Stream(ctx, "T")
		if err != nil {
			return err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if info.State.Msgs != uint64(n) {
			return fmt.Errorf("the stream holds %d messages, want %d", info.State.Msgs, n)
		}
		for seq := 1; seq <= n; seq++ {
			m, err := st.GetMsg(ctx, uint64(seq))
			if err != nil {
				return fmt.Errorf("message %d: %w", seq, err)
			}
			if want := fmt.Sprintf("m%d", seq); string(m.Data) != want {
				t.Fatalf("message %d = %q, want %q", seq, m.Data, want)
			}
		}
		return nil
	})
}

func newJS(t *testing.T, urls string) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(Connect(t, urls))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestServerRestartKeepsTheStore: a stream written before Shutdown is there after Restart, on
// the same URL, and the same client goes on using it.
func TestServerRestartKeepsTheStore(t *testing.T) {
	s := Start(t)
	js := newJS(t, s.URL())
	eventually(t, "create the stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage})
		return err
	})
	publish(t, js, 1, 3)
	readAll(t, js, 3)
	if !storeHasFiles(t, s.StoreDir()) {
		t.Fatalf("no files under the store dir %s after writing a file stream", s.StoreDir())
	}

	url := s.URL()
	s.Shutdown()
	s.Shutdown() // idempotent
	if s.NATS() != nil {
		t.Fatal("NATS() is not nil after Shutdown")
	}
	s.Restart(t)
	if s.URL() != url {
		t.Fatalf("URL after Restart = %s, want %s (the same port)", s.URL(), url)
	}
	publish(t, js, 4, 4)
	readAll(t, js, 4)
}

func storeHasFiles(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestClusterKeepsAnR3StreamWithAServerDown: an R3 stream on three servers goes on taking and
// serving messages when the server leading it stops.
func TestClusterKeepsAnR3StreamWithAServerDown(t *testing.T) {
	c := StartCluster(t, 3)
	servers := c.Servers()
	if len(servers) != 3 || len(strings.Split(c.URLs(), ",")) != 3 {
		t.Fatalf("Servers() = %d, URLs() = %q; want 3 of each", len(servers), c.URLs())
	}
	names := map[string]bool{}
	for _, s := range servers {
		names[s.Name()] = true
	}
	if len(names) != 3 {
		t.Fatalf("server names %v are not distinct", names)
	}

	js := newJS(t, c.URLs())
	eventually(t, "create the R3 stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage, Replicas: 3})
		return err
	})
	publish(t, js, 1, 5)

	var leader string
	eventually(t, "find the stream's leader", func(ctx context.Context) error {
		st, err := js.Stream(ctx, "T")
		if err != nil {
			return err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("the stream's cluster is %+v; want a leader and 2 replicas", info.Cluster)
		}
		leader = info.Cluster.Leader
		return nil
	})
	stopped := -1
	for i, s := range servers {
		if s.Name() == leader {
			stopped = i
		}
	}
	if stopped < 0 {
		t.Fatalf("the stream's leader %q is none of the servers", leader)
	}
	c.Stop(stopped)
	if servers[stopped].NATS() != nil {
		t.Fatalf("server %s still runs after Stop", leader)
	}

	publish(t, js, 6, 10)
	readAll(t, js, 10)
}
