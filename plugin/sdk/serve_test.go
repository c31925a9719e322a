package sdk

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// goroutineID is the calling goroutine's number, from the first line of its stack.
func goroutineID() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf) // "goroutine 18 [running]:"
	id, _ := strconv.ParseUint(string(f[1]), 10, 64)
	return id
}

// TestCallsRunOnStreamWorkers: the plugin's server (newGRPCServer) runs calls on its stream
// workers, whose stacks stay grown between calls, rather than on a new goroutine per call. One
// call after another, the handlers run on at most streamWorkers goroutines.
func TestCallsRunOnStreamWorkers(t *testing.T) {
	var mu sync.Mutex
	seen := map[uint64]bool{}
	p := Plugin{Name: "workers", Version: "1.0.0", Tasks: []TaskDef{
		Task("where", func(context.Context, *Call, struct{}) (struct{}, error) {
			mu.Lock()
			seen[goroutineID()] = true
			mu.Unlock()
			return struct{}{}, nil
		}),
	}}
	if err := p.check(); err != nil {
		t.Fatal(err)
	}
	s := newGRPCServer(nil)
	pluginv1.RegisterProviderServer(s, newProvider(p))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() {
		s.Stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pluginv1.NewProviderClient(conn)
	const calls = 3 * streamWorkers
	for range calls {
		resp, err := client.Execute(context.Background(), &pluginv1.ExecuteRequest{Task: "where", Input: []byte(`{}`), Config: []byte(`{}`)})
		if err != nil || resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS {
			t.Fatalf("call: %v %v", resp, err)
		}
	}
	if len(seen) > streamWorkers {
		t.Errorf("%d calls ran on %d goroutines; want at most %d (the stream workers)", calls, len(seen), streamWorkers)
	}
}
