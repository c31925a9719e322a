package redact

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHandler(t *testing.T) {
	const s = "slog-secret-42"
	set := NewSet()
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var inner slog.Handler = slog.NewJSONHandler(&buf, nil)
			if format == "text" {
				inner = slog.NewTextHandler(&buf, nil)
			}
			log := slog.New(NewHandler(inner, set))
			set.Add(s)
			log.With("bound", "x "+s).WithGroup("g").Info("message "+s,
				"str", s,
				"err", fmt.Errorf("wrapped: %w", errors.New("cause "+s)),
				"raw", json.RawMessage(`{"k":"`+s+`"}`),
				"bytes", []byte("b "+s),
				"struct", struct{ Token string }{s},
				"b64", base64.StdEncoding.EncodeToString([]byte("u:"+s)),
				slog.Group("inner", "deep", s),
				"n", 42, "d", time.Second,
			)
			out := buf.String()
			for _, want := range []string{"message " + Marker, "42", "wrapped: cause " + Marker} {
				if !strings.Contains(out, want) {
					t.Errorf("log lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, s) || strings.Contains(out, "slog-secret") {
				t.Fatalf("the secret is in the log:\n%s", out)
			}
			leaks(t, out, s)
		})
	}
	// A nil set is the handler itself.
	inner := slog.NewJSONHandler(io.Discard, nil)
	if NewHandler(inner, nil) != slog.Handler(inner) {
		t.Fatal("NewHandler with a nil set wrapped the handler")
	}
}

func TestHTTP(t *testing.T) {
	const s = "api-secret-value"
	set := NewSet()
	set.Add(s)
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "bad " + s, "q": `"` + s})
	})
	mux.HandleFunc("/lines", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		f := w.(http.Flusher)
		_ = enc.Encode(map[string]string{"line": "one " + s})
		f.Flush()
		// A line written in pieces, the secret cut between them.
		_, _ = io.WriteString(w, `{"line":"two `+s[:5])
		_, _ = io.WriteString(w, s[5:]+`"}`+"\n")
		f.Flush()
		_, _ = io.WriteString(w, `{"line":"last, no newline `+s+`"}`)
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "" {
			t.Errorf("the handler saw Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
		}
		http.Error(w, "no such thing: "+s, http.StatusNotFound)
	})
	mux.HandleFunc("/artifact", func(w http.ResponseWriter, r *http.Request) {
		body := "stored bytes " + s
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = io.WriteString(w, body)
	})
	// A document written a value at a time, each scrubbed by the handler; the writer passes
	// the bytes through as they come (the first value reaches the client before the handler
	// returns).
	firstSent := make(chan struct{})
	var sentOnce sync.Once
	sendRest := func() { sentOnce.Do(func() { close(firstSent) }) }
	mux.HandleFunc("/values", func(w http.ResponseWriter, r *http.Request) {
		scrub := w.(JSONValues).JSONValues()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"values":[`)
		_, _ = w.Write(scrub([]byte(`{"v":"one ` + s + `"}`)))
		w.(http.Flusher).Flush()
		<-firstSent
		_, _ = io.WriteString(w, ",")
		_, _ = w.Write(scrub([]byte(`"two ` + s + `"`)))
		_, _ = io.WriteString(w, "]}\n")
	})
	// The outer set's secret, scrubbed by an outer HTTP as fuscia serve wraps the owner's API.
	const outerSecret = "outer-secret-value"
	outerSet := NewSet()
	outerSet.Add(outerSecret)
	mux.HandleFunc("/values2", func(w http.ResponseWriter, r *http.Request) {
		scrub := w.(JSONValues).JSONValues()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(scrub([]byte(`["` + s + `","` + outerSecret + `"]`)))
	})
	srv := httptest.NewServer(HTTP(HTTP(mux, set), outerSet))
	defer srv.Close()
	defer sendRest() // before Close, which waits for /values's handler, on every way out
	get := func(path string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("/json")
	if resp.StatusCode != http.StatusTeapot || strings.Contains(body, s) {
		t.Fatalf("/json: %d %s", resp.StatusCode, body)
	}
	var doc map[string]string
	if err := json.Unmarshal([]byte(body), &doc); err != nil || doc["error"] != "bad "+Marker || doc["q"] != `"`+Marker {
		t.Fatalf("/json body %q (%v)", body, err)
	}
	_, body = get("/lines")
	sc := bufio.NewScanner(strings.NewReader(body))
	n := 0
	for sc.Scan() {
		n++
		if !json.Valid(sc.Bytes()) || strings.Contains(sc.Text(), s) || !strings.Contains(sc.Text(), Marker) {
			t.Errorf("/lines line %q", sc.Text())
		}
	}
	if n != 3 {
		t.Errorf("/lines: %d lines:\n%s", n, body)
	}
	resp, body = get("/text")
	if resp.StatusCode != http.StatusNotFound || body != "no such thing: "+Marker+"\n" {
		t.Errorf("/text: %d %q", resp.StatusCode, body)
	}
	_, body = get("/artifact")
	if body != "stored bytes "+s {
		t.Errorf("/artifact was changed: %q", body)
	}

	first := make([]byte, len(`{"values":[{"v":"one `+Marker+`"}`))
	type answer struct {
		resp *http.Response
		err  error
	}
	read := make(chan answer, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/values")
		if err == nil {
			_, err = io.ReadFull(resp.Body, first)
		}
		read <- answer{resp, err}
	}()
	var a answer
	select {
	case a = <-read:
	case <-time.After(time.Minute): // a hang guard: kept whole, nothing comes until the end
		sendRest()
		a = <-read
		a.err = errors.New("the first value did not come before the handler returned")
	}
	if a.resp != nil {
		defer a.resp.Body.Close()
	}
	if a.err != nil {
		t.Fatalf("/values: %v", a.err)
	}
	sendRest()
	rest, _ := io.ReadAll(a.resp.Body)
	if _, body := get("/values2"); body != `["`+Marker+`","`+Marker+`"]` {
		t.Errorf("/values2 (two HTTPs, one secret each): %q", body)
	}
	var values struct{ Values []any }
	if err := json.Unmarshal(append(first, rest...), &values); err != nil || strings.Contains(string(first)+string(rest), s) ||
		len(values.Values) != 2 || values.Values[1] != "two "+Marker {
		t.Errorf("/values body %s%s (%v)", first, rest, err)
	}
}
