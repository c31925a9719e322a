package serve

import (
	"net/http"

	"github.com/fuscia/fuscia/engine/local"
)

// public marks a route that serve's TCP listener answers without a token.
const public local.Scope = ""

// routeScopes is the scope every /v1/ route needs on serve's TCP listener (docs/security.md,
// "API tokens"), in one table: the owner's routes (engine/local) and serve's (api.go). A route
// this table does not name needs admin, so a route added without an entry is refused to every
// token but admin's; TestRouteScopesCoverRoutes fails until it has one.
var routeScopes = map[string]local.Scope{
	// A load balancer's readiness probe carries no secret.
	"GET /v1/health": public,

	"GET /v1/workflows":                            local.ScopeRead,
	"GET /v1/workflows/{name}/graph":               local.ScopeRead,
	"GET /v1/executions/{id}/graph":                local.ScopeRead,
	"GET /v1/workers":                              local.ScopeRead,
	"GET /v1/executions":                           local.ScopeRead,
	"GET /v1/executions/{id}":                      local.ScopeRead,
	"GET /v1/executions/{id}/logs":                 local.ScopeRead,
	"GET /v1/executions/{id}/events":               local.ScopeRead,
	"GET /v1/executions/{id}/timeline":             local.ScopeRead,
	"GET /v1/executions/{id}/nodes/{node...}":      local.ScopeRead,
	"GET /v1/executions/{id}/artifacts":            local.ScopeRead,
	"GET /v1/executions/{id}/artifacts/{artifact}": local.ScopeRead,

	"POST /v1/workflows/{name}/runs":       local.ScopeOperate,
	"POST /v1/executions/{id}/cancel":      local.ScopeOperate,
	"POST /v1/executions/{id}/resume":      local.ScopeOperate,
	"POST /v1/executions/{id}/signal":      local.ScopeOperate,
	"DELETE /v1/executions/{id}/artifacts": local.ScopeAdmin,
	"POST /v1/prune":                       local.ScopeAdmin,
	"GET /v1/tokens":                       local.ScopeAdmin,
	"POST /v1/tokens":                      local.ScopeAdmin,
	"DELETE /v1/tokens/{name}":             local.ScopeAdmin,
	// Refused on the TCP listener whatever the token (apply.go): a plan is code to run.
	"POST /v1/apply": local.ScopeAdmin,
}

// scopeTable finds the scope a request needs, matching it against routeScopes' patterns as
// the API's own mux matches its routes (the patterns are the same strings).
type scopeTable struct {
	mux *http.ServeMux
}

func newScopeTable() scopeTable {
	mux := http.NewServeMux()
	for pattern := range routeScopes {
		mux.Handle(pattern, http.NotFoundHandler())
	}
	return scopeTable{mux: mux}
}

// need returns the scope r needs: the entry of the route it matches, admin when it matches
// none (an unknown path or method answers 404 or 405 to admin tokens only).
func (t scopeTable) need(r *http.Request) local.Scope {
	_, pattern := t.mux.Handler(r)
	if s, ok := routeScopes[pattern]; ok && pattern != "" {
		return s
	}
	return local.ScopeAdmin
}
