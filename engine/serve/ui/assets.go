package ui

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// The UI's files, as served: /ui/assets/NAME is assets/NAME of Assets, and every other /ui/ path
// a GET reaches is index.html, whose script reads the path (/ui/runs/ID) and draws that page.
//
// Asset URLs carry no version (there is no build step to name files after their contents), so
// a browser may keep an asset but must ask again before it uses it: Cache-Control no-cache with
// an ETag, the SHA-256 of the file, which a new binary's files change. The revalidation is a 304
// without a body. index.html is never kept (no-store): it is what names the assets.

// assetsDir is the folder of Assets served under /ui/assets/.
const assetsDir = "assets"

// indexFile is the page every /ui/ path that is not an asset answers.
const indexFile = "index.html"

// contentTypes are the media types of the files an asset may be; with nosniff, a browser runs a
// script or applies a style sheet only when its type says so. Others: mime's table, else
// application/octet-stream.
var contentTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".json":  "application/json",
	".txt":   "text/plain; charset=utf-8",
	".woff2": "font/woff2",
}

// asset is a file of the UI, ready to serve.
type asset struct {
	name        string // its path in the assets folder
	data        []byte
	contentType string
	etag        string // a strong ETag: the SHA-256 of data
}

// assetSet is every file of the UI, by its path in the assets folder.
type assetSet struct {
	files map[string]*asset
	index *asset
}

// loadAssets reads every file under assetsDir of fsys.
func loadAssets(fsys fs.FS) (*assetSet, error) {
	set := &assetSet{files: map[string]*asset{}}
	err := fs.WalkDir(fsys, assetsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, assetsDir+"/")
		sum := sha256.Sum256(data)
		set.files[name] = &asset{name: name, data: data, contentType: contentTypeOf(name), etag: `"` + hex.EncodeToString(sum[:]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the UI's assets: %w", err)
	}
	set.index = set.files[indexFile]
	if set.index == nil {
		return nil, fmt.Errorf("the UI's assets have no %s", indexFile)
	}
	return set, nil
}

func contentTypeOf(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if ct, ok := contentTypes[ext]; ok {
		return ct
	}
	if ct := mime.TypeByExtension(ext); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

// lookup returns the asset of a /ui/assets/… path, already cleaned by the mux.
func (set *assetSet) lookup(urlPath string) (*asset, bool) {
	name, ok := strings.CutPrefix(urlPath, assetsPrefix)
	if !ok || !fs.ValidPath(name) {
		return nil, false
	}
	a, ok := set.files[name]
	return a, ok
}

// serveAsset answers GET /ui/assets/NAME: the file, 304 to a request that holds its ETag, or 404.
func (set *assetSet) serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := set.lookup(r.URL.Path)
	if !ok {
		http.Error(w, fmt.Sprintf("no UI asset at %s", r.URL.Path), http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", "no-cache")
	// ServeContent answers If-None-Match (304), ranges and HEAD; the zero time sends no
	// Last-Modified: the ETag is the validator.
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.data))
}

// serveIndex answers every other GET under /ui/ with index.html, never to be kept.
func (set *assetSet) serveIndex(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", set.index.contentType)
	h.Set("Cache-Control", "no-store")
	http.ServeContent(w, r, indexFile, time.Time{}, bytes.NewReader(set.index.data))
}
