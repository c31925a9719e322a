package sdk

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

func TestHandleTrigger(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	host := newFakeHost()
	hostID := r.serveHost(host)
	body := base64.StdEncoding.EncodeToString([]byte("ping"))
	completed := pluginv1.HandleTriggerResponse_TYPE_COMPLETED
	failed := pluginv1.HandleTriggerResponse_TYPE_ERROR
	tests := []struct {
		name, trigger, event string
		want                 *pluginv1.HandleTriggerResponse
		wantPrefix           string
	}{
		{"first poll is pending", "tick", `{"type":"poll"}`,
			&pluginv1.HandleTriggerResponse{Type: pluginv1.HandleTriggerResponse_TYPE_PENDING}, ""},
		{"second poll completes from KV", "tick", ``,
			&pluginv1.HandleTriggerResponse{Type: completed, Payload: []byte(`{"n":"1"}`)}, ""},
		{"webhook", "tick", `{"type":"webhook","request":{"method":"POST","path":"/h","query":{"a":"1"},` +
			`"headers":{"X-Signature":"s"},"body_base64":"` + body + `"}}`,
			&pluginv1.HandleTriggerResponse{Type: completed,
				Payload: []byte(`{"body":"ping","method":"POST","q":"1","sig":"s"}`)}, ""},
		{"webhook, lenient encoding", "tick", `{"type":"webhook","request":{"method":"PUT","query":"a=1&a=2",` +
			`"headers":{"x-signature":["s1","s2"]},"body_base64":"` + strings.TrimRight(body, "=") + `"}}`,
			&pluginv1.HandleTriggerResponse{Type: completed,
				Payload: []byte(`{"body":"ping","method":"PUT","q":"1,2","sig":"s1, s2"}`)}, ""},
		{"webhook validation error", "tick", `{"type":"webhook"}`,
			&pluginv1.HandleTriggerResponse{Type: failed, ErrorKind: "validation", Message: "empty body"}, ""},
		{"plain error", "tick", `{"type":"other"}`,
			&pluginv1.HandleTriggerResponse{Type: failed, ErrorKind: "retryable", Message: `unexpected event "other"`}, ""},
		{"malformed event", "tick", `{"type":`,
			&pluginv1.HandleTriggerResponse{Type: failed, ErrorKind: "fatal"}, `trigger "tick": malformed event`},
		{"nil payload", "nil", `{"type":"poll"}`,
			&pluginv1.HandleTriggerResponse{Type: completed, Payload: []byte(`{}`)}, ""},
		{"panic", "panic", `{"type":"poll"}`,
			&pluginv1.HandleTriggerResponse{Type: failed, ErrorKind: "fatal", Message: `trigger "panic" panicked: trigger exploded`}, ""},
		{"unknown trigger", "nope", `{"type":"poll"}`,
			&pluginv1.HandleTriggerResponse{Type: failed, ErrorKind: "validation",
				Message: `this plugin has no trigger "nope"; its triggers are nil, panic, tick`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.HandleTrigger(context.Background(), &pluginv1.HandleTriggerRequest{
				Trigger: tt.trigger, Event: []byte(tt.event), CallId: "trig-1", HostBrokerId: hostID,
				Context: &pluginv1.CallContext{Workflow: "wf", Node: "trigger.t"}})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantPrefix != "" {
				if !strings.HasPrefix(got.Message, tt.wantPrefix) {
					t.Errorf("message = %q, want prefix %q", got.Message, tt.wantPrefix)
				}
				got.Message = ""
			}
			if !proto.Equal(got, tt.want) {
				t.Errorf("response = %v\nwant %v", got, tt.want)
			}
		})
	}
	if !host.callIDs["trig-1"] {
		t.Errorf("the host saw call ids %v, want trig-1", host.callIDs)
	}
}
