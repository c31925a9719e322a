// Command rawstream is a Fuscia plugin written on the raw protocol that says it serves
// ExecuteStream and ends its streams in two ways the SDK never does:
//
//   - task "effect" appends a line to the file its input names, then ends the stream with an
//     UNIMPLEMENTED status (as a plugin that passes on a downstream API's error might): Fuscia
//     must report the error and never send the request again, or the effect would happen twice;
//   - task "once" answers, then ends the stream while it waits for the next call: Fuscia must
//     make the next call on a new stream;
//   - task "silent" appends a line to the file its input names, then ends the stream with an OK
//     status and no answer (which the protocol forbids): Fuscia must fail the call and not send
//     it again on a new stream;
//   - task "twice" answers its call twice (`{"answer":1}`, then `{"answer":2}`) and task
//     "echo" answers `{"task":"echo"}`, both echoing the call id and keeping the stream for
//     the next call: Fuscia must not take the second answer for the next call's;
//   - task "flood" answers its call 20 times and keeps the stream: the next call on it must
//     fail rather than wait through answers for ever.
//
// Each GetSchema appends a line to getschema.log next to the binary, for tests that count them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fuscia/fuscia/plugin/sdk"
	"github.com/fuscia/fuscia/plugin/testdata/rawserve"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

type provider struct {
	pluginv1.UnimplementedProviderServer
}

func (provider) GetSchema(context.Context, *pluginv1.GetSchemaRequest) (*pluginv1.GetSchemaResponse, error) {
	if err := countSchemaCall(); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pluginv1.GetSchemaResponse{
		Name: "rawstream", Version: "0.1.0", ProtocolVersion: sdk.ProtocolVersion, ExecuteStream: true,
		Tasks: map[string]*pluginv1.TaskSchema{
			"effect": {}, "once": {}, "silent": {}, "twice": {}, "echo": {}, "flood": {},
		},
	}, nil
}

// Execute does what a stream's first call does, for a host that would send the call again on
// it: the effect happens there too.
func (provider) Execute(_ context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	if req.Task == "effect" {
		return nil, effect(string(req.Input))
	}
	return &pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_SUCCESS, Output: []byte(`{"ok":true}`)}, nil
}

func (p provider) ExecuteStream(s grpc.BidiStreamingServer[pluginv1.ExecuteRequest, pluginv1.ExecuteResponse]) error {
	req, err := s.Recv()
	if err != nil {
		return nil
	}
	for answers := map[string]int{"twice": 2, "echo": 1, "flood": 20}; answers[req.Task] > 0; {
		for n := range answers[req.Task] {
			out := fmt.Sprintf(`{"answer":%d}`, n+1)
			if req.Task == "echo" {
				out = `{"task":"echo"}`
			}
			if err := s.Send(&pluginv1.ExecuteResponse{
				Type: pluginv1.ExecuteResponse_TYPE_SUCCESS, Output: []byte(out), CallId: req.CallId,
			}); err != nil {
				return err
			}
		}
		if req, err = s.Recv(); err != nil {
			return nil
		}
	}
	if req.Task == "silent" {
		if err := appendLine(string(req.Input), "silent"); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		return nil // no answer
	}
	resp, err := p.Execute(s.Context(), req)
	if err != nil {
		return err
	}
	return s.Send(resp) // and the stream ends
}

// effect appends a line to file, then fails with UNIMPLEMENTED.
func effect(file string) error {
	if err := appendLine(file, "effect"); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return status.Error(codes.Unimplemented, "downstream: method not supported")
}

// appendLine appends line and a newline to file.
func appendLine(file, line string) error {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(line + "\n")
	return errors.Join(werr, f.Close())
}

// countSchemaCall appends a line to getschema.log in the binary's directory.
func countSchemaCall() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return appendLine(filepath.Join(filepath.Dir(exe), "getschema.log"), "GetSchema")
}

func main() { rawserve.Serve(provider{}) }
