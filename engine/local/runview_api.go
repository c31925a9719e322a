package local

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/fuscia/fuscia/lang/addrs"
)

// The views of one run that the web UI draws besides the execution object: its timeline and
// one node's detail (docs/reference/api.md, "A run's timeline and nodes").

// timeline answers GET /v1/executions/{id}/timeline.
func (s *server) timeline(w http.ResponseWriter, r *http.Request) {
	id, err := s.ops.resolve(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tl, err := s.ops.st.Timeline(id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tl)
}

// Items of a node's detail: a page of defaultItems unless the request says otherwise, never
// more than maxItems.
const (
	defaultItems = 50
	maxItems     = 500
)

// nodeDetail answers GET /v1/executions/{id}/nodes/{node...}: node is an instance's address
// (`task.fetch`, `task.each[3]`, `loop.l/task.a[1]`).
func (s *server) nodeDetail(w http.ResponseWriter, r *http.Request) {
	inst, err := addrs.ParseInstance(r.PathValue("node"))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	q := r.URL.Query()
	offset, ok := countParam(w, q.Get("offset"), "offset", 0)
	if !ok {
		return
	}
	limit, ok := countParam(w, q.Get("limit"), "limit", defaultItems)
	if !ok {
		return
	}
	if limit == 0 {
		limit = defaultItems
	}
	limit = min(limit, maxItems)
	id, err := s.ops.resolve(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := s.ops.st.NodeDetail(id, inst, offset, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// countParam reads a count 0 or more (def when v is empty); on a bad one it answers 400 and
// reports false.
func countParam(w http.ResponseWriter, v, name string, def int) (int, bool) {
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30 {
		writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("%s %q is not a count", name, v))
		return 0, false
	}
	return n, true
}
