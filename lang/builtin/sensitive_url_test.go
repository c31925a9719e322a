package builtin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/internal/outcome"
)

// TestSensitiveURLNotQuoted: when the engine says the URL is sensitive, no message or log line
// of builtin.http quotes it, even where the server repeats it (an error page, a redirect);
// the same URL without the flag is quoted as before.
func TestSensitiveURLNotQuoted(t *testing.T) {
	t.Parallel()
	const token = "T0k3n-for/the path"
	derived := base64.RawURLEncoding.EncodeToString([]byte("user:" + token))
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			http.Redirect(w, r, "/elsewhere"+r.URL.Path+"?again="+r.URL.Query().Get("k"), http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/elsewhere/"):
			http.Redirect(w, r, "mailto:"+r.URL.Path, http.StatusFound)
		default:
			http.Error(w, "Cannot GET "+r.URL.RequestURI()+" (query k="+r.URL.Query().Get("k")+")", http.StatusNotFound)
		}
	})
	// A closed port: connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	r, _ := testRunner(t, nil, nil)
	cases := []struct {
		name, url string
		kind      outcome.Kind
	}{
		{"404 echoing the path", srv.URL + "/users/" + url.PathEscape(token) + "/" + derived + "?k=" + url.QueryEscape(derived), outcome.Fatal},
		{"redirect to a refused scheme", srv.URL + "/moved/" + derived, outcome.Fatal},
		{"connection refused", closed + "/x/" + derived, outcome.Retryable},
		{"not absolute", "/relative/" + derived, outcome.Validation},
		{"does not parse", "http://" + host + "/%zz" + derived, outcome.Validation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := json.Marshal(map[string]any{"url": tc.url, "allow_hosts": []string{"127.0.0.1"}})
			var logs []string
			q := Request{Name: "http", Input: in, Sensitive: []string{"/url"}, Log: func(_, msg string) { logs = append(logs, msg) }}
			res := r.Run(context.Background(), q)
			if res.Type != outcome.Failure || res.Kind != tc.kind {
				t.Fatalf("result %+v, want a %s failure", res, tc.kind)
			}
			text := res.Message + "\n" + strings.Join(logs, "\n")
			for _, form := range []string{derived, token, url.PathEscape(token), url.QueryEscape(derived), "/users/", "/moved/", "/relative/", "/x/"} {
				if strings.Contains(text, form) {
					t.Errorf("%q is quoted:\n%s", form, text)
				}
			}
			if tc.kind != outcome.Validation && !strings.Contains(res.Message, "(sensitive URL)") {
				t.Errorf("the message does not say the URL is sensitive: %s", res.Message)
			}
			if tc.kind == outcome.Fatal && !strings.Contains(res.Message, "http://"+host) {
				t.Errorf("the message does not name the scheme and host: %s", res.Message)
			}
			// Without the flag the same URL's path is quoted, as it always was.
			q.Sensitive = nil
			plain := r.Run(context.Background(), q)
			if tc.kind != outcome.Validation && !strings.Contains(plain.Message, derived) {
				t.Errorf("a URL that is not sensitive lost its path: %s", plain.Message)
			}
		})
	}
	// The whole input sensitive is the URL sensitive too.
	in, _ := json.Marshal(map[string]any{"url": srv.URL + "/" + derived, "allow_hosts": []string{"127.0.0.1"}})
	res := r.Run(context.Background(), Request{Name: "http", Input: in, Sensitive: []string{""}})
	if strings.Contains(res.Message, derived) {
		t.Errorf("a wholly sensitive input's URL is quoted: %s", res.Message)
	}
	// A sensitive header does not hide the URL.
	res = r.Run(context.Background(), Request{Name: "http", Input: in, Sensitive: []string{"/headers/Authorization"}})
	if !strings.Contains(res.Message, derived) {
		t.Errorf("a sensitive header hid the URL: %s", res.Message)
	}
}
