//go:build !wasip1

package guest

import (
	"encoding/json"
	"strconv"
	"testing"
)

// fakeHost is an in-process host with the imports' shape: bytes in, bytes out, false for 0.
type fakeHost struct {
	logs      []logLine
	config    map[string]string
	kv        map[string]string
	artifacts map[string][]byte
	// artifactAnswer, when set, replaces artifact_write's answer.
	artifactAnswer []byte
	// http answers http_request; httpSent is the last request it got.
	http     func(req httpRequestJSON) []byte
	httpSent []byte
}

type logLine struct {
	level Level
	msg   string
}

// useFakeHost installs a fresh fake host for the test and restores the previous one after it.
func useFakeHost(t *testing.T) *fakeHost {
	t.Helper()
	h := &fakeHost{config: map[string]string{}, kv: map[string]string{}, artifacts: map[string][]byte{}}
	prev := host
	host = h
	t.Cleanup(func() { host = prev })
	return h
}

func (h *fakeHost) log(level int32, msg string) {
	h.logs = append(h.logs, logLine{Level(level), msg})
}

func (h *fakeHost) configGet(key string) ([]byte, bool) {
	v, ok := h.config[key]
	return []byte(v), ok
}

func (h *fakeHost) kvGet(key string) ([]byte, bool) {
	v, ok := h.kv[key]
	return []byte(v), ok
}

func (h *fakeHost) kvSet(key, value string) { h.kv[key] = value }
func (h *fakeHost) kvDelete(key string)     { delete(h.kv, key) }

func (h *fakeHost) artifactWrite(contentType string, data []byte) ([]byte, bool) {
	if h.artifactAnswer != nil {
		return h.artifactAnswer, true
	}
	id := "art-" + strconv.Itoa(len(h.artifacts)+1)
	h.artifacts[id] = append([]byte(nil), data...)
	b, _ := json.Marshal(map[string]any{"artifact_id": id, "content_type": contentType, "size": len(data)})
	return b, true
}

func (h *fakeHost) artifactRead(id string) ([]byte, bool) {
	b, ok := h.artifacts[id]
	return b, ok
}

func (h *fakeHost) httpRequest(req []byte) ([]byte, bool) {
	h.httpSent = append([]byte(nil), req...)
	if h.http == nil {
		return nil, false
	}
	var r httpRequestJSON
	if err := json.Unmarshal(req, &r); err != nil {
		panic(err)
	}
	return h.http(r), true
}
