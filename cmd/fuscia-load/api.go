package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The HTTP side of serve the modes use: the webhook, the executions API (with the token of
// token.go) and the wait for accepted runs to finish.

// newClient is an HTTP client that keeps up to conns connections to serve open.
func newClient(conns int) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// httpStatusError is an answer other than 200 to a GET, with the start of its body.
type httpStatusError struct {
	code int
	body string
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.code, strings.TrimSpace(e.body))
}

// getJSON GETs url and decodes the 200 answer into v.
func getJSON(ctx context.Context, c *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &httpStatusError{code: resp.StatusCode, body: string(b)}
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// postHook POSTs {"id": id} to the webhook and returns the status and execution id.
func postHook(ctx context.Context, c *http.Client, url string, id int64) (int, string, error) {
	body := strconv.AppendInt([]byte(`{"id":`), id, 10)
	body = append(body, '}')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return resp.StatusCode, "", err
	}
	if resp.StatusCode != http.StatusAccepted {
		return resp.StatusCode, "", nil
	}
	var r struct {
		ID string `json:"execution_id"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		return resp.StatusCode, "", fmt.Errorf("a 202 without an execution_id: %q", b)
	}
	return resp.StatusCode, r.ID, nil
}

// runSummary is a run as GET /v1/executions lists it.
type runSummary struct {
	ID         string     `json:"execution_id"`
	Workflow   string     `json:"workflow"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// listRuns is GET /v1/executions?q.
func listRuns(ctx context.Context, c *http.Client, api string, q string) ([]runSummary, error) {
	var r struct {
		Executions []runSummary `json:"executions"`
	}
	err := getJSON(ctx, c, api+"/v1/executions?"+q, &r)
	return r.Executions, err
}

// waitDrained waits until no run of workflow hook is running, waiting or interrupted and at
// least want runs have finished; it returns every run of hook and when the drain was seen.
func waitDrained(ctx context.Context, c *http.Client, sp *serveProc, want int, timeout time.Duration) ([]runSummary, time.Time, error) {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if !sp.running() {
			return nil, time.Time{}, errors.New("serve exited while the runs were finishing")
		}
		busy := false
		for _, st := range []string{"running", "waiting", "interrupted"} {
			runs, err := listRuns(ctx, c, sp.api, "workflow=hook&status="+st+"&limit=1")
			if err != nil {
				last = err.Error()
				busy = true
				break
			}
			if len(runs) > 0 {
				last = fmt.Sprintf("a run is still %s", st)
				busy = true
				break
			}
		}
		if !busy {
			seen := time.Now()
			runs, err := listRuns(ctx, c, sp.api, "workflow=hook")
			if err == nil {
				finished := 0
				for _, r := range runs {
					if r.FinishedAt != nil {
						finished++
					}
				}
				if finished >= want {
					return runs, seen, nil
				}
				last = fmt.Sprintf("%d of %d runs finished", finished, want)
			} else {
				last = err.Error()
			}
		}
		if time.Now().After(deadline) {
			runs, _ := listRuns(ctx, c, sp.api, "workflow=hook")
			return runs, time.Time{}, fmt.Errorf("the accepted runs did not all finish within -drain-timeout %s (%s)", timeout, last)
		}
		select {
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runView is the part of GET /v1/executions/{id} the soak checks: the status, the end, and
// the payload id that ties the run to its request.
type runView struct {
	Status     string     `json:"status"`
	FinishedAt *time.Time `json:"finished_at"`
	Trigger    struct {
		Payload struct {
			Body struct {
				ID *json.Number `json:"id"`
			} `json:"body"`
		} `json:"payload"`
	} `json:"trigger"`
}

// fetchRuns GETs every run of ids with workers parallel requests (three tries each, but one
// for a 404); it returns the runs read and an error line per run that was not.
func fetchRuns(ctx context.Context, sp *serveProc, ids []string, workers int) (map[string]runView, []string) {
	client := withToken(newClient(workers), sp.token)
	out := make(map[string]runView, len(ids))
	var errs []string
	var mu sync.Mutex
	next := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				var v runView
				var err error
				for attempt := 0; attempt < 3; attempt++ {
					if err = getJSON(ctx, client, sp.api+"/v1/executions/"+id, &v); err == nil {
						break
					}
					var he *httpStatusError
					if errors.As(err, &he) && he.code == http.StatusNotFound || ctx.Err() != nil {
						break
					}
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, id+": "+err.Error())
				} else {
					out[id] = v
				}
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	return out, errs
}
