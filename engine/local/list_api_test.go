package local

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// seedStarted journals n finished runs of workflow w, started one second apart from base, and
// returns their ids, oldest first.
func seedStarted(t *testing.T, st *journal.Store, base time.Time, n int) []string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range n {
		ids[i] = newID()
		at := base.Add(time.Duration(i) * time.Second)
		err := st.Append(ctx, ids[i], i == n-1,
			journal.Entry{Type: journal.RunStarted, Time: at, Run: &journal.RunInfo{Workflow: "w", Trigger: journal.Trigger{Type: "manual", Name: "go"}}},
			journal.Entry{Type: journal.RunFinished, Status: journal.StatusSucceeded, Time: at.Add(time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

type listPage struct {
	Executions []journal.Summary `json:"executions"`
	NextCursor *string           `json:"next_cursor"`
}

func getPage(t *testing.T, base, query string) (int, listPage, string) {
	t.Helper()
	resp, err := http.Get(base + "/v1/executions?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	var p listPage
	_ = json.Unmarshal(raw, &p)
	return resp.StatusCode, p, string(raw)
}

func pageIDs(sums []journal.Summary) []string {
	out := []string{}
	for _, s := range sums {
		out = append(out, s.ID)
	}
	return out
}

// TestListPaging: GET /v1/executions answers every run without limit or cursor, pages of at most 500, newest
// first, with a next_cursor that the next page starts from ("" after the last); started_after
// and started_before select by start time; a bad cursor or time is 400. The socket's client
// reads every page, so `executions list` still lists every run.
func TestListPaging(t *testing.T) {
	home := shortHome(t)
	o := ownHome(t, home)
	base := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
	ids := seedStarted(t, o.Store, base, 520)
	newest := slices.Clone(ids)
	slices.Reverse(newest)
	srv := httptest.NewServer(o.Handler())
	defer srv.Close()

	// Without limit or cursor: every run, as before pages existed.
	if code, all, raw := getPage(t, srv.URL, ""); code != http.StatusOK || !slices.Equal(pageIDs(all.Executions), newest) || all.NextCursor == nil || *all.NextCursor != "" {
		t.Fatalf("no limit: %d, %d runs, cursor %v; want all %d and no cursor (%.200s)", code, len(all.Executions), all.NextCursor, len(newest), raw)
	}
	code, p, raw := getPage(t, srv.URL, "limit=50")
	if code != http.StatusOK || !slices.Equal(pageIDs(p.Executions), newest[:50]) || p.NextCursor == nil || *p.NextCursor == "" {
		t.Fatalf("first page: %d, %d runs, cursor %v; want the newest 50 and a cursor (%.200s)", code, len(p.Executions), p.NextCursor, raw)
	}
	if _, p, _ := getPage(t, srv.URL, "limit=1000"); len(p.Executions) != 500 {
		t.Errorf("limit=1000: %d runs, want 500 (the most a page holds)", len(p.Executions))
	}

	var all []string
	q := url.Values{"limit": {"199"}}
	for pages := 1; ; pages++ {
		code, p, raw := getPage(t, srv.URL, q.Encode())
		if code != http.StatusOK || p.NextCursor == nil {
			t.Fatalf("page %d: %d %.200s", pages, code, raw)
		}
		all = append(all, pageIDs(p.Executions)...)
		if *p.NextCursor == "" {
			if pages != 3 {
				t.Errorf("%d pages of 199 for 520 runs, want 3", pages)
			}
			break
		}
		q.Set("cursor", *p.NextCursor)
	}
	if !slices.Equal(all, newest) {
		t.Errorf("the pages hold %d runs, want all 520 once, newest first", len(all))
	}
	// A page that ends exactly at the last run says there is no next one.
	if _, p, _ := getPage(t, srv.URL, "limit=20&cursor="+encodeCursor(ids[20])); p.NextCursor == nil || *p.NextCursor != "" || !slices.Equal(pageIDs(p.Executions), newest[500:]) {
		t.Errorf("the last 20: %v, cursor %v", pageIDs(p.Executions), p.NextCursor)
	}

	// Runs 100 to 149 started in [base+100s, base+150s).
	rng := url.Values{"started_after": {base.Add(100 * time.Second).Format(time.RFC3339)}, "started_before": {base.Add(150 * time.Second).Format(time.RFC3339Nano)}, "limit": {"500"}}
	want := slices.Clone(ids[100:150])
	slices.Reverse(want)
	if _, p, raw := getPage(t, srv.URL, rng.Encode()); !slices.Equal(pageIDs(p.Executions), want) {
		t.Errorf("started in [100 s, 150 s): %v, want runs 149 to 100 (%.200s)", pageIDs(p.Executions), raw)
	}

	for _, bad := range []string{"cursor=nope", "cursor=" + encodeCursor("a/b"), "started_after=yesterday", "started_before=2026-02-01", "limit=-1"} {
		if code, _, raw := getPage(t, srv.URL, bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", bad, code, raw)
		}
	}

	b := openBackend(t, home)
	if _, ok := b.(*client); !ok {
		t.Fatalf("backend %T, want the socket's client", b)
	}
	ctx := context.Background()
	got, err := b.List(ctx, journal.Filter{})
	if err != nil || !slices.Equal(pageIDs(got), newest) {
		t.Errorf("client List: %d runs (%v), want all 520 newest first", len(got), err)
	}
	got, err = b.List(ctx, journal.Filter{Limit: 510})
	if err != nil || !slices.Equal(pageIDs(got), newest[:510]) {
		t.Errorf("client List limit 510: %d runs (%v)", len(got), err)
	}
	got, err = b.List(ctx, journal.Filter{StartedAfter: base.Add(510 * time.Second), BeforeID: ids[515]})
	if err != nil || fmt.Sprint(pageIDs(got)) != fmt.Sprint([]string{ids[514], ids[513], ids[512], ids[511], ids[510]}) {
		t.Errorf("client List started after 510 s, before run 515: %v (%v)", pageIDs(got), err)
	}
}
