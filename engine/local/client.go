package local

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
)

// client is a Backend on the owner's API.
type client struct {
	home, sock string
	logger     *slog.Logger
	transport  *http.Transport
	hc         *http.Client
}

// errOwnerGone marks the failures that mean the owner stopped answering: a follow then goes on
// without it (followDetached).
var errOwnerGone = errors.New("no answer")

// The host of the API's URLs: the transport ignores it and dials the socket.
const apiBase = "http://fuscia"

func newClient(home string, logger *slog.Logger) *client {
	sock := filepath.Join(home, SocketName)
	t := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
		// The owner answers every request at once (a follow sends its header before its first
		// line): a process that accepts connections but does not answer is stuck.
		ResponseHeaderTimeout: time.Minute,
	}
	return &client{home: home, sock: sock, logger: logger, transport: t, hc: &http.Client{Transport: t}}
}

func (c *client) Close() error {
	c.transport.CloseIdleConnections()
	return nil
}

// apiError is an error answer of the API; it unwraps to the sentinel its code stands for.
type apiError struct {
	msg        string
	sentinel   error
	noEndpoint bool
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.sentinel }

// request sends a request and returns the response when its status is below 300; otherwise it
// decodes the error body into an *apiError.
func (c *client) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, apiBase+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.gone(err)
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		return nil, c.gone(errStopping)
	}
	var eb errorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(b, &eb); err != nil || eb.Error == "" {
		return nil, fmt.Errorf("the fuscia process that owns the state store answered %s", resp.Status)
	}
	if eb.Code == CodeSecret && eb.Range != nil {
		return nil, &engine.SecretError{Range: *eb.Range, Err: errors.New(eb.Error)}
	}
	e := &apiError{msg: eb.Error}
	switch eb.Code {
	case codeNotFound:
		e.sentinel = journal.ErrNotFound
	case codeAmbiguous:
		e.sentinel = journal.ErrAmbiguous
	case codeFinished:
		e.sentinel = ErrFinished
	case codeNotWaiting:
		e.sentinel = ErrNotWaiting
	case codeInvalidSignal:
		e.sentinel = ErrInvalidSignal
	case codeNoEndpoint:
		e.noEndpoint = true
	case codeNotFinished:
		e.sentinel = ErrNotFinished
	case codeNoArtifact:
		e.sentinel = artifact.ErrNotFound
	case codeArtifactDeleted:
		e.sentinel = errors.Join(artifact.ErrNotFound, artifact.ErrDeleted)
	case codeTokenExists:
		e.sentinel = ErrTokenExists
	case codeNoToken:
		e.sentinel = ErrNoToken
	case codeInvalidToken:
		e.sentinel = ErrInvalidToken
	case CodeNoCluster:
		e.sentinel = ErrNoCluster
	}
	if eb.Code == codeFinished {
		return nil, &finishedError{apiError: e, status: eb.Status}
	}
	return nil, e
}

// gone wraps an error that means the owner stopped answering.
func (c *client) gone(err error) error {
	return fmt.Errorf("talk to the fuscia process that owns the state store (%s): %w: %w", c.sock, errOwnerGone, err)
}

// finishedError is the API's answer to cancelling a finished run, with the run's status.
type finishedError struct {
	*apiError
	status string
}

// getJSON decodes the answer of a GET into out.
func (c *client) getJSON(ctx context.Context, path string, out any) error {
	return c.doJSON(ctx, http.MethodGet, path, nil, out)
}

func (c *client) doJSON(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode the answer of %s %s: %w", method, path, err)
	}
	return nil
}

func (c *client) List(ctx context.Context, f journal.Filter) ([]journal.Summary, error) {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	setTime := func(k string, t time.Time) {
		if !t.IsZero() {
			q.Set(k, t.Format(time.RFC3339Nano))
		}
	}
	set("workflow", f.Workflow)
	set("status", f.Status)
	set("parent", f.Parent)
	setTime("completed_before", f.CompletedBefore)
	setTime("started_after", f.StartedAfter)
	setTime("started_before", f.StartedBefore)
	if f.BeforeID != "" {
		q.Set("cursor", encodeCursor(f.BeforeID))
	}
	// The API answers pages (of at most maxPage runs): read them until f.Limit runs, or all.
	all := []journal.Summary{}
	for {
		page := maxPage
		if f.Limit > 0 {
			page = min(page, f.Limit-len(all))
		}
		q.Set("limit", fmt.Sprint(page))
		var out struct {
			Executions []journal.Summary `json:"executions"`
			NextCursor string            `json:"next_cursor"`
		}
		if err := c.getJSON(ctx, "/v1/executions?"+q.Encode(), &out); err != nil {
			return nil, err
		}
		all = append(all, out.Executions...)
		// An owner older than paging answers every run and no cursor.
		if out.NextCursor == "" || f.Limit > 0 && len(all) >= f.Limit {
			return all, nil
		}
		q.Set("cursor", out.NextCursor)
	}
}

func (c *client) Execution(ctx context.Context, id string) (*journal.Execution, error) {
	var x journal.Execution
	if err := c.getJSON(ctx, "/v1/executions/"+url.PathEscape(id), &x); err != nil {
		return nil, err
	}
	return &x, nil
}

func (c *client) Logs(ctx context.Context, ref, node string, follow bool, fn func(journal.LogLine) error) error {
	after, err := c.logs(ctx, ref, 0, node, follow, fn)
	if follow && errors.Is(err, errOwnerGone) {
		// The owner stopped before the run ended (an apply interrupted, a serve restarting):
		// the run may be resumed by another process, or never; follow it wherever it goes.
		return followDetached(ctx, c.home, ref, after, node, fn, c.logger)
	}
	return err
}

// logs streams the lines of run ref after seq after, and returns the seq of the last line
// delivered. A failure that means the owner went away wraps errOwnerGone; fn's errors are
// returned as they are.
func (c *client) logs(ctx context.Context, ref string, after uint64, node string, follow bool, fn func(journal.LogLine) error) (uint64, error) {
	q := url.Values{}
	if node != "" {
		q.Set("node", node)
	}
	if follow {
		q.Set("follow", "1")
	}
	if after > 0 {
		q.Set("after", fmt.Sprint(after))
	}
	err := c.stream(ctx, http.MethodGet, executionPath(ref, "logs", q), nil, func(line []byte) error {
		var l journal.LogLine
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("decode a log line of execution %s: %w", ref, err)
		}
		after = l.Seq
		return fn(l)
	})
	return after, err
}

// executionPath is /v1/executions/{ref}/{what}?q.
func executionPath(ref, what string, q url.Values) string {
	path := "/v1/executions/" + url.PathEscape(ref) + "/" + what
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// stream sends a request that answers an NDJSON stream and calls line with each line. A
// failure that means the owner went away wraps errOwnerGone; line's errors are returned as they
// are.
func (c *client) stream(ctx context.Context, method, path string, body any, line func([]byte) error) error {
	resp, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	// Lines are bounded by the host (a log line, docs/reference/abi-v1.md) or by what a run holds (an
	// execution_finished event carries the execution), not by bufio's default 64 KiB; the
	// buffer grows only as far as a line needs.
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := line(sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.gone(err)
	}
	// The trailer is only known once the body has been read to its end.
	switch msg := resp.Trailer.Get(streamErrorTrailer); msg {
	case "":
		return nil
	case errStopping.Error():
		return c.gone(errStopping)
	default:
		return fmt.Errorf("%s: %s", path, msg)
	}
}

func (c *client) Cancel(ctx context.Context, id string) (string, error) {
	var out cancelResponse
	err := c.doJSON(ctx, http.MethodPost, "/v1/executions/"+url.PathEscape(id)+"/cancel", nil, &out)
	var fe *finishedError
	if errors.As(err, &fe) {
		return fe.status, fe.apiError
	}
	if err != nil {
		return "", err
	}
	return out.Status, nil
}

func (c *client) Prune(ctx context.Context, before time.Time) ([]string, error) {
	if before.IsZero() {
		return nil, errors.New("prune: no completion time given")
	}
	var out pruneResponse
	err := c.doJSON(ctx, http.MethodPost, "/v1/prune", pruneRequest{CompletedBefore: before.Format(time.RFC3339Nano)}, &out)
	if err != nil {
		return nil, err
	}
	if out.ExecutionIDs == nil {
		out.ExecutionIDs = []string{}
	}
	return out.ExecutionIDs, nil
}
