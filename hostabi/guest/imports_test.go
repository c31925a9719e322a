//go:build !wasip1

package guest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestKV(t *testing.T) {
	h := useFakeHost(t)
	if v, ok := KV.Get("n"); ok || v != "" {
		t.Errorf("Get of an absent key = %q, %v", v, ok)
	}
	KV.Set("n", "41")
	KV.Set("empty", "")
	KV.Set("bin", "\x00\xff")
	if v, ok := KV.Get("n"); !ok || v != "41" {
		t.Errorf("Get = %q, %v; want 41, true", v, ok)
	}
	if v, ok := KV.Get("empty"); !ok || v != "" {
		t.Errorf("Get of an empty value = %q, %v; want \"\", true", v, ok)
	}
	if v, _ := KV.Get("bin"); v != "\x00\xff" {
		t.Errorf("Get of bytes = %q", v)
	}
	KV.Delete("n")
	KV.Delete("never")
	if _, ok := h.kv["n"]; ok {
		t.Error("Delete left the key")
	}
}

func TestConfig(t *testing.T) {
	h := useFakeHost(t)
	h.config["from"] = "shop@example.com"
	h.config["limits"] = `{"max":3}`
	for key, want := range map[string]struct {
		v  string
		ok bool
	}{"from": {"shop@example.com", true}, "limits": {`{"max":3}`, true}, "absent": {"", false}} {
		if v, ok := Config(key); v != want.v || ok != want.ok {
			t.Errorf("Config(%q) = %q, %v; want %q, %v", key, v, ok, want.v, want.ok)
		}
	}
}

func TestLog(t *testing.T) {
	h := useFakeHost(t)
	Log(LevelInfo, "started %d", 3)
	Log(LevelWarn, "as is")
	Debugf("d %s", "x")
	Infof("i")
	Warnf("w")
	Errorf("e %v", errors.New("x"))
	want := []logLine{
		{LevelInfo, "started 3"}, {LevelWarn, "as is"}, {LevelDebug, "d x"}, {LevelInfo, "i"},
		{LevelWarn, "w"}, {LevelError, "e x"},
	}
	if !reflect.DeepEqual(h.logs, want) {
		t.Errorf("logs = %+v\nwant %+v", h.logs, want)
	}
	for l, want := range map[Level]string{LevelDebug: "debug", LevelError: "error", 7: "level(7)"} {
		if l.String() != want {
			t.Errorf("Level(%d).String() = %q", int(l), l.String())
		}
	}
}

func TestHTTP(t *testing.T) {
	tests := []struct {
		name     string
		do       func() (*HTTPResponse, error)
		answer   string // the host's answer; "" for none
		wantSent string
		want     *HTTPResponse
		wantErr  string // a prefix of the error
	}{
		{
			name:     "get",
			do:       func() (*HTTPResponse, error) { return HTTP.Get("https://api.example.com/x") },
			answer:   `{"status":200,"headers":{"Content-Type":"text/plain"},"body_base64":"aGk="}`,
			wantSent: `{"method":"GET","url":"https://api.example.com/x"}`,
			want:     &HTTPResponse{Status: 200, Headers: map[string]string{"Content-Type": "text/plain"}, Body: []byte("hi")},
		},
		{
			name: "do with everything",
			do: func() (*HTTPResponse, error) {
				return HTTP.Do(HTTPRequest{Method: "PUT", URL: "https://a.example/", Headers: map[string]string{"X-A": "1"},
					Body: []byte("hello"), Timeout: 1500 * time.Millisecond})
			},
			answer: `{"status":201,"headers":{"Set-Cookie":["a=1","b=2"]}}`,
			wantSent: `{"method":"PUT","url":"https://a.example/","headers":{"X-A":"1"},"body_base64":"aGVsbG8=",` +
				`"timeout_ms":1500}`,
			want: &HTTPResponse{Status: 201, Headers: map[string]string{"Set-Cookie": "a=1, b=2"}, Body: []byte{}},
		},
		{
			name: "default method and post",
			do: func() (*HTTPResponse, error) {
				return HTTP.Post("https://a.example/", "application/json", []byte("{}"))
			},
			answer:   `{"status":500}`,
			wantSent: `{"method":"POST","url":"https://a.example/","headers":{"Content-Type":"application/json"},"body_base64":"e30="}`,
			want:     &HTTPResponse{Status: 500, Headers: map[string]string{}, Body: []byte{}},
		},
		{
			name:     "empty method is GET",
			do:       func() (*HTTPResponse, error) { return HTTP.Do(HTTPRequest{URL: "https://a.example/"}) },
			answer:   `{"status":204,"headers":null,"body_base64":""}`,
			wantSent: `{"method":"GET","url":"https://a.example/"}`,
			want:     &HTTPResponse{Status: 204, Headers: map[string]string{}, Body: []byte{}},
		},
		{
			name:    "sandbox violation",
			do:      func() (*HTTPResponse, error) { return HTTP.Get("https://evil.example/") },
			answer:  `{"error":"evil.example is not in allowed_hosts","kind":"sandbox_violation"}`,
			wantErr: "sandbox violation: evil.example is not in allowed_hosts",
		},
		{
			name:    "network error",
			do:      func() (*HTTPResponse, error) { return HTTP.Get("https://down.example/") },
			answer:  `{"error":"connection refused","kind":"network"}`,
			wantErr: "http: connection refused",
		},
		{
			name:    "no answer",
			do:      func() (*HTTPResponse, error) { return HTTP.Get("https://a.example/") },
			wantErr: "http: the host answered nothing",
		},
		{
			name:    "malformed answer",
			do:      func() (*HTTPResponse, error) { return HTTP.Get("https://a.example/") },
			answer:  `{"status":"ok"}`,
			wantErr: "http: malformed answer from the host: ",
		},
		{
			name:    "malformed body",
			do:      func() (*HTTPResponse, error) { return HTTP.Get("https://a.example/") },
			answer:  `{"status":200,"body_base64":"%%"}`,
			wantErr: "http: malformed body_base64 from the host: illegal base64 data at input byte 0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := useFakeHost(t)
			if tt.answer != "" {
				h.http = func(httpRequestJSON) []byte { return []byte(tt.answer) }
			}
			got, err := tt.do()
			if tt.wantSent != "" && string(h.httpSent) != tt.wantSent {
				t.Errorf("sent\n got %s\nwant %s", h.httpSent, tt.wantSent)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %s…", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("response = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestHTTPErrorTypes(t *testing.T) {
	h := useFakeHost(t)
	h.http = func(httpRequestJSON) []byte { return []byte(`{"error":"no","kind":"sandbox_violation"}`) }
	_, err := HTTP.Get("https://evil.example/")
	var se *SandboxError
	if !errors.As(err, &se) || se.Message != "no" {
		t.Errorf("err = %#v, want a *SandboxError", err)
	}
	h.http = func(httpRequestJSON) []byte { return []byte(`{"error":"reset","kind":"network"}`) }
	_, err = HTTP.Get("https://a.example/")
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Kind != "network" || ne.Message != "reset" {
		t.Errorf("err = %#v, want a *NetworkError", err)
	}
}

func TestResponseHeader(t *testing.T) {
	r := &HTTPResponse{Headers: map[string]string{"Content-Type": "text/csv", "x-id": "7"}}
	for name, want := range map[string]string{"Content-Type": "text/csv", "content-type": "text/csv", "X-Id": "7", "Etag": ""} {
		if got := r.Header(name); got != want {
			t.Errorf("Header(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestArtifacts(t *testing.T) {
	h := useFakeHost(t)
	ref, err := Artifacts.Write("text/csv", []byte("a,b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (ArtifactRef{ID: "art-1", ContentType: "text/csv", Size: 4}); ref != want {
		t.Errorf("Write = %+v, want %+v", ref, want)
	}
	b, err := Artifacts.Read(ref.ID)
	if err != nil || string(b) != "a,b\n" {
		t.Errorf("Read = %q, %v", b, err)
	}
	if _, err := Artifacts.Write("text/plain", nil); err != nil {
		t.Fatal(err)
	}
	if b, err := Artifacts.Read("art-2"); err != nil || b == nil || len(b) != 0 {
		t.Errorf("Read of an empty artifact = %#v, %v; want empty, nil", b, err)
	}
	_, err = Artifacts.Read("art-9")
	if !errors.Is(err, ErrArtifactNotFound) || err.Error() != `artifact "art-9": not found` {
		t.Errorf("Read of a missing artifact: err = %v", err)
	}

	for answer, want := range map[string]string{
		`{"error":"quota exceeded"}`: "artifact write: quota exceeded",
		`{"size":3}`:                 "artifact write: the host answered without an artifact_id",
		`[`:                          "artifact write: malformed answer from the host: unexpected end of JSON input",
	} {
		h.artifactAnswer = []byte(answer)
		if _, err := Artifacts.Write("text/plain", []byte("abc")); err == nil || err.Error() != want {
			t.Errorf("Write answered %s: err = %v, want %s", answer, err, want)
		}
	}
}

func TestNoHost(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "GOOS=wasip1") {
			t.Errorf("panic = %v, want one that says the imports need wasip1", p)
		}
	}()
	prev := host
	host = noHost{}
	defer func() { host = prev }()
	KV.Get("x")
}
