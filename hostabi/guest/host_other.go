//go:build !wasip1

package guest

import (
	"os"
)

// Outside wasip1 there are no host imports: the host* functions call host instead, which the
// package's tests replace with a fake. Its methods have the imports' shape (bytes in, bytes
// out, false for the "none" answer 0), so the tests cover the same encoding as the real ABI.
type hostImports interface {
	log(level int32, msg string)
	configGet(key string) ([]byte, bool)
	kvGet(key string) ([]byte, bool)
	kvSet(key, value string)
	kvDelete(key string)
	artifactWrite(contentType string, data []byte) ([]byte, bool)
	artifactRead(id string) ([]byte, bool)
	httpRequest(req []byte) ([]byte, bool)
}

// host is the stand-in for the host. Only tests set it, never concurrently with a call.
var host hostImports = noHost{}

func hostLog(level Level, msg string)           { host.log(int32(level), msg) }
func hostConfigGet(key string) ([]byte, bool)   { return host.configGet(key) }
func hostKVGet(key string) ([]byte, bool)       { return host.kvGet(key) }
func hostKVSet(key, value string)               { host.kvSet(key, value) }
func hostKVDelete(key string)                   { host.kvDelete(key) }
func hostArtifactRead(id string) ([]byte, bool) { return host.artifactRead(id) }
func hostHTTPRequest(req []byte) ([]byte, bool) { return host.httpRequest(req) }
func hostArtifactWrite(contentType string, data []byte) ([]byte, bool) {
	return host.artifactWrite(contentType, data)
}

// noHost is the host outside Wasm: logging goes to standard error, anything else panics.
type noHost struct{}

const noHostMsg = "guest: no Fuscia host: the host imports exist only in a component built with GOOS=wasip1 GOARCH=wasm"

func (noHost) log(level int32, msg string) {
	os.Stderr.WriteString(Level(level).String() + ": " + msg + "\n")
}
func (noHost) configGet(string) ([]byte, bool)             { panic(noHostMsg) }
func (noHost) kvGet(string) ([]byte, bool)                 { panic(noHostMsg) }
func (noHost) kvSet(string, string)                        { panic(noHostMsg) }
func (noHost) kvDelete(string)                             { panic(noHostMsg) }
func (noHost) artifactWrite(string, []byte) ([]byte, bool) { panic(noHostMsg) }
func (noHost) artifactRead(string) ([]byte, bool)          { panic(noHostMsg) }
func (noHost) httpRequest([]byte) ([]byte, bool)           { panic(noHostMsg) }
