// Command fetch is the fuscia/fetch component: HTTP GET through the host's sandbox, and
// artifacts. It may reach only the hosts of its manifest's allowed_hosts.
//
// Build it with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o component.wasm .
package main

import (
	"strconv"
	"time"

	"github.com/fuscia/fuscia/hostabi/guest"
)

// main is not called: the component is a WASI reactor, and its handlers are registered in init.
func main() {}

func init() {
	guest.Task("get", get)
	guest.Task("save", save)
	guest.Task("load", load)
}

type urlInput struct {
	URL string `json:"url"`
}

// page is the output of get.
type page struct {
	Status      int    `json:"status"`
	Body        string `json:"body"`
	ContentType string `json:"content_type"`
}

// get fetches url and returns the response.
func get(_ guest.Context, in urlInput) (guest.Result, error) {
	resp, err := fetch(in.URL)
	if err != nil {
		return guest.Result{}, err
	}
	return guest.Success(page{Status: resp.Status, Body: string(resp.Body), ContentType: resp.Header("Content-Type")}), nil
}

// save fetches url and stores the body as an artifact of the execution.
func save(_ guest.Context, in urlInput) (guest.Result, error) {
	resp, err := fetch(in.URL)
	if err != nil {
		return guest.Result{}, err
	}
	ct := resp.Header("Content-Type")
	if ct == "" {
		ct = "application/octet-stream"
	}
	ref, err := guest.Artifacts.Write(ct, resp.Body)
	if err != nil {
		return guest.Result{}, err
	}
	guest.Infof("saved %s as artifact %s (%d bytes)", in.URL, ref.ID, ref.Size)
	return guest.Success(map[string]any{
		"status": resp.Status, "artifact_id": ref.ID, "content_type": ref.ContentType, "size": ref.Size,
	}), nil
}

type loadInput struct {
	ArtifactID string `json:"artifact_id"`
}

// load reads an artifact of the execution back.
func load(_ guest.Context, in loadInput) (guest.Result, error) {
	b, err := guest.Artifacts.Read(in.ArtifactID)
	if err != nil {
		return guest.Result{}, guest.Fatal("load: %v", err)
	}
	return guest.Success(map[string]any{"body": string(b), "size": len(b)}), nil
}

// fetch GETs url. A 2xx is a response; a 5xx (and 429) a retryable error; anything else a
// fatal one. A sandbox violation is returned as it is: the host fails the attempt anyway.
func fetch(url string) (*guest.HTTPResponse, error) {
	if url == "" {
		return nil, guest.Validation("url must not be empty")
	}
	resp, err := guest.HTTP.Do(guest.HTTPRequest{Method: "GET", URL: url, Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	partial := page{Status: resp.Status, Body: string(resp.Body), ContentType: resp.Header("Content-Type")}
	switch {
	case resp.Status >= 200 && resp.Status < 300:
		return resp, nil
	case resp.Status >= 500 || resp.Status == 429:
		return nil, guest.WithPartialOutput(
			guest.Retryable("GET "+url+": HTTP "+strconv.Itoa(resp.Status), retryAfter(resp)), partial)
	default:
		return nil, guest.WithPartialOutput(guest.Fatal("GET %s: HTTP %d", url, resp.Status), partial)
	}
}

// retryAfter is the response's Retry-After in seconds, as a backoff hint; 0 when absent.
func retryAfter(resp *guest.HTTPResponse) time.Duration {
	s, err := strconv.Atoi(resp.Header("Retry-After"))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}
