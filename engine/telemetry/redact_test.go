package telemetry

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/fuscia/fuscia/engine/redact"
)

// TestConsoleSpansAreScrubbed: what the engine puts in a span (a failed attempt's error as the
// status description, RecordError's event, attributes) reaches the console exporter without
// the secrets of the set, in any form; and the logger of the same Setup scrubs too.
func TestConsoleSpansAreScrubbed(t *testing.T) {
	const secret = "span-secret/v@lue"
	set := redact.NewSet()
	var buf bytes.Buffer
	tel, err := Setup(context.Background(), Config{
		Getenv: env(map[string]string{"OTEL_TRACES_EXPORTER": "console"}),
		Stderr: &buf, LogFormat: "json", Redact: set,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Added after Setup, as a run adds its secrets: the exporter reads the set when it exports.
	set.Add(secret)
	_, span := tel.Tracer.Start(context.Background(), "attempt task.x", trace.WithAttributes(
		attribute.String("http.url", "https://h/x?t="+url.QueryEscape(secret)),
		attribute.StringSlice("args", []string{"a", secret}),
		AttrAttempt.Int(1),
	))
	span.RecordError(errors.New("GET https://h/" + url.PathEscape(secret) + " failed"))
	span.AddEvent("retry", trace.WithAttributes(attribute.String("auth", "Basic "+base64.StdEncoding.EncodeToString([]byte("u:"+secret)))))
	span.SetStatus(codes.Error, "builtin.http: GET https://h/"+secret+" failed")
	span.End()
	tel.Logger.Error("attempt failed", "error", errors.New("token "+secret))
	shutdown(t, tel)
	out := buf.String()
	if !strings.Contains(out, `"Description":"builtin.http: GET https://h/(sensitive) failed"`) {
		t.Errorf("status description not scrubbed as expected:\n%s", out)
	}
	for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), "span-secret", base64.StdEncoding.EncodeToString([]byte("u:" + secret))[4:]} {
		if strings.Contains(out, form) {
			t.Errorf("the console output holds %q:\n%s", form, out)
		}
	}
	if strings.Count(out, redact.Marker) < 6 {
		t.Errorf("expected a marker in each of the 6 places:\n%s", out)
	}
}
