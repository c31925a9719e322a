package local

import (
	"encoding/base64"
	"errors"
	"strings"
)

// GET /v1/executions with a limit or a cursor answers a page of runs, newest first: defaultPage
// of them unless the request's limit says otherwise, never more than maxPage; without either,
// every run. Its next_cursor names where the
// next page starts; the client gives it back as is.
const (
	defaultPage = 50
	maxPage     = 500
)

// cursorPrefix versions the cursor's form, so that a later one can tell an old cursor apart.
const cursorPrefix = "v1:"

// encodeCursor is the cursor of the page after the run id: the runs older than it.
func encodeCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + id))
}

// errCursor is the answer to a cursor this API did not give.
var errCursor = errors.New("cursor is not one that GET /v1/executions gave (next_cursor): give it back as it came, or leave it out for the first page")

// decodeCursor returns the run id a cursor names.
func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", errCursor
	}
	id, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok || id == "" || strings.ContainsAny(id, "/\x00") {
		return "", errCursor
	}
	return id, nil
}
