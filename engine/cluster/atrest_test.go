package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/internal/natstest"
	"github.com/fuscia/fuscia/lang"
)

// secret is a value no file holds by chance.
func secret(what string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return what + "-" + hex.EncodeToString(b)
}

// TestSecretsAtRest: secrets in a component's config and input, in a builtin.http request and
// in the results and log lines that quote them are nowhere in the NATS server's storage in
// clear text.
func TestSecretsAtRest(t *testing.T) {
	srv := natstest.Start(t)
	s := newSite(t)
	home := t.TempDir()
	installWatEcho(t, filepath.Join(home, "components"))
	c := newCluster(t, srv.URL(), clusterOptions{Home: home})
	c.startWorker(t, WorkerOptions{})

	configSecret, inputSecret := secret("config"), secret("input")
	bodySecret, headerSecret := secret("body"), secret("header")
	b := c.bindComponent(t, "echo", "fuscia/wat-echo", cty.ObjectVal(map[string]cty.Value{"greeting": cty.StringVal(configSecret)}))
	logs := &logLines{}
	echo := newCall("task.echo", lang.Uses{Kind: lang.UsesComponent, Local: "echo", Name: "echo"},
		map[string]any{"token": inputSecret}, "", logs)
	echo.Sensitive = []string{"/token"}
	r := c.call(t, b, echo)
	wantSuccess(t, "wat-echo", r)
	// The secrets went through: the output quotes the input, the log line the config.
	if !strings.Contains(string(r.Output), inputSecret) || !strings.Contains(logs.String(), configSecret) {
		t.Fatalf("output %s, log %q: the secrets did not reach the component", r.Output, logs.String())
	}

	hb := c.bindHTTP(t)
	post := newCall("task.post", lang.Uses{Kind: lang.UsesBuiltin, Name: "http"}, map[string]any{
		"url": s.URL + "/echo", "method": "POST", "body": bodySecret,
		"headers": map[string]string{"Authorization": "Bearer " + headerSecret},
	}, "", nil)
	post.Sensitive = []string{"/body", "/headers"}
	r = c.call(t, hb, post)
	wantSuccess(t, "builtin.http", r)
	var out struct {
		Body string `json:"body"`
	}
	if err := json.Unmarshal(r.Output, &out); err != nil || out.Body != bodySecret {
		t.Fatalf("builtin.http output %s: the site did not echo the body", r.Output)
	}

	// Everything on disk: the server flushes its stores when it stops.
	srv.Shutdown()
	dir := srv.StoreDir()
	// What is in clear is there (the attempts' ids are headers): the grep reads the messages.
	for _, id := range []string{attemptID(echo), attemptID(post)} {
		if len(filesContaining(t, dir, []byte(id))) == 0 {
			t.Fatalf("no file under %s holds attempt id %s: the stores were not read", dir, id)
		}
	}
	for _, sec := range []string{configSecret, inputSecret, bodySecret, headerSecret} {
		if files := filesContaining(t, dir, []byte(sec)); len(files) != 0 {
			t.Errorf("the secret %s is in clear text in %v", sec, files)
		}
	}
}
