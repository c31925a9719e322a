package ui

import (
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/fuscia/fuscia/engine/local"
)

// Prefix is the path the UI is served under; GET / redirects to it.
const Prefix = "/ui/"

// assetsPrefix is where the assets are served.
const assetsPrefix = Prefix + assetsDir + "/"

// ErrUnavailable is what Config.Check returns while serve cannot check tokens yet (its store is
// not open): a login then answers 503 with Retry-After.
var ErrUnavailable = errors.New("fuscia is starting: its store is not open yet; retry shortly")

// Limiter is the API's limit on failed authentications per client address: a bad login counts
// against it as a bad token on the API does, and a client over it can no more log in than call
// the API. Its methods are safe for concurrent use.
type Limiter interface {
	// Blocked reports whether r's client has used up its failures, and how long until it may
	// try again.
	Blocked(r *http.Request, now time.Time) (time.Duration, bool)
	// Failed records a failed authentication by r's client.
	Failed(r *http.Request, now time.Time)
}

// Config is what the UI's handler needs. Check, Limiter and Sessions are required.
type Config struct {
	// Check checks an API token as the API does (local.TokenChecker.Check): an error wrapping
	// local.ErrUnauthenticated for a token that is not valid at now, ErrUnavailable while it
	// cannot tell, any other error the store's.
	Check func(token string, now time.Time) (local.TokenInfo, error)
	// Limiter is the API's limiter of failed authentications.
	Limiter Limiter
	// Sessions is the store the API also reads the session cookie from.
	Sessions *Sessions
	// Logger returns the logger of the moment, which gets the logins and the refused ones
	// (serve replaces its logger once its store is open); nil discards them.
	Logger func() *slog.Logger
	// Now is the clock of sessions and token expiry; nil means time.Now.
	Now func() time.Time
	// Assets are the files served, with assets/index.html; nil means the embedded Assets.
	Assets fs.FS
}

// Handler answers every path under /ui/: the assets, index.html for the pages, and the
// session endpoints (login.go). It is safe for concurrent use.
type Handler struct {
	cfg    Config
	assets *assetSet
	mux    *http.ServeMux
}

// New returns the UI's handler. It fails only when the assets lack index.html.
func New(cfg Config) (*Handler, error) {
	if cfg.Check == nil || cfg.Limiter == nil || cfg.Sessions == nil {
		return nil, errors.New("ui.New: Check, Limiter and Sessions are required")
	}
	if cfg.Logger == nil {
		discard := slog.New(slog.DiscardHandler)
		cfg.Logger = func() *slog.Logger { return discard }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Assets == nil {
		cfg.Assets = Assets
	}
	set, err := loadAssets(cfg.Assets)
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, assets: set, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST "+Prefix+"login", h.login)
	h.mux.HandleFunc("GET "+Prefix+"session", h.session)
	h.mux.HandleFunc("POST "+Prefix+"logout", h.logout)
	h.mux.HandleFunc("GET "+assetsPrefix, set.serveAsset)
	h.mux.HandleFunc("GET "+Prefix, set.serveIndex)
	return h, nil
}

// ServeHTTP sets the security headers (SetHeaders) and answers r.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	SetHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
}
