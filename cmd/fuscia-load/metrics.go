package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// serveMetrics are the figures of serve's /metrics that bench and soak report. Their results
// embed a pointer to it: nil, and absent from the RESULT line, when the scrape failed.
type serveMetrics struct {
	ResidentMemory mebibytes          `json:"metric_process_resident_memory_mib"` // process_resident_memory_bytes
	RunsTotalHook  map[string]float64 `json:"metric_runs_total_hook"`             // fuscia_runs_total{workflow="hook"} by outcome
}

// scrapeServe reads serveMetrics from url; nil if it cannot.
func scrapeServe(ctx context.Context, c *http.Client, url string) *serveMetrics {
	vals, hook, err := scrape(ctx, c, url)
	if err != nil {
		return nil
	}
	return &serveMetrics{ResidentMemory: mebibytes(vals["process_resident_memory_bytes"] / mib), RunsTotalHook: hook}
}

// scrape reads serve's Prometheus text: the sum of every series of each name, and
// fuscia_runs_total of workflow hook by outcome.
func scrape(ctx context.Context, c *http.Client, url string) (map[string]float64, map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads Prometheus text as scrape does.
func parseMetrics(r io.Reader) (map[string]float64, map[string]float64, error) {
	vals := map[string]float64{}
	hook := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		series := line[:sp]
		name, labels, _ := strings.Cut(series, "{")
		vals[name] += v
		if name == "fuscia_runs_total" && strings.Contains(labels, `workflow="hook"`) {
			hook[labelValue(labels, "outcome")] += v
		}
	}
	return vals, hook, sc.Err()
}

// labelValue is the value of label name in labels (the text between a series' braces).
func labelValue(labels, name string) string {
	i := strings.Index(labels, name+`="`)
	if i < 0 {
		return ""
	}
	rest := labels[i+len(name)+2:]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return rest
}

// sumValues is the sum of m's values.
func sumValues(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}
