package hostabi

// The world's host interface (fuscia:host/host@1.0.0) for components: the same services as the
// core module "fuscia" of imports.go, with the component model's types instead of (ptr, len)
// JSON. A bad argument (a key past its limit, a value of the wrong type) traps with a message
// that fails the attempt, as in ABI v1.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/fuscia/fuscia/lang/schema"
)

// maxComponentBytes bounds a list<u8> that crosses between a component and the host (an
// artifact, an HTTP body). wasmtime's C API carries such a list as one 32-byte value per byte,
// so a megabyte of body costs 32 MB of host memory while it crosses; ABI v1, which copies
// bytes, allows more (maxArtifactBytes, MaxHTTPResponseBytes).
const maxComponentBytes = 4 << 20

// maxComponentHeaders bounds the headers of an http-request, each lifted as several values.
// The argument guard (argguard.go) checks it, and maxComponentBytes, maxKeyBytes and
// maxValueBytes, inside the guest before wasmtime lifts the arguments.
const maxComponentHeaders = 1024

// hostImport is one function of the host interface: its WIT name and what it does with its
// arguments and results.
type hostImport struct {
	name string
	run  func(c *call, args, results []cval) error
}

// worldImports is the host interface in the order of hostabi/wit/fuscia.wit.
var worldImports = []hostImport{
	{"log", (*call).componentLog},
	{"config-get", (*call).componentConfigGet},
	{"kv-get", (*call).componentKVGet},
	{"kv-set", (*call).componentKVSet},
	{"kv-delete", (*call).componentKVDelete},
	{"artifact-write", (*call).componentArtifactWrite},
	{"artifact-read", (*call).componentArtifactRead},
	{"http-request", (*call).componentHTTPRequest},
}

// componentImport runs host import fn for the call whose store has key.
func (h *Host) componentImport(key uintptr, fn int, args, results []cval) error {
	v, ok := h.componentCalls.Load(key)
	if !ok {
		return fmt.Errorf("fuscia host: %s was called outside an attempt", worldImports[fn].name)
	}
	c := v.(*call)
	c.lastImport = worldImports[fn].name
	if err := worldImports[fn].run(c, args, results); err != nil {
		if c.hostFault == "" {
			c.hostFault = err.Error()
		}
		return err
	}
	return nil
}

// arity checks the number of arguments and results wasmtime passed: a component whose import
// has another signature than the world's gets an error, not a crash.
func arity(fn string, args, results []cval, nargs, nresults int) error {
	if len(args) != nargs || len(results) != nresults {
		return fmt.Errorf("%s: called with %d arguments and %d results; world %s declares %d and %d",
			fn, len(args), len(results), World, nargs, nresults)
	}
	return nil
}

// key reads a key argument, at most maxKeyBytes long.
func argKey(fn, what string, v *cval) (string, error) {
	if n := stringLen(v); n > maxKeyBytes {
		return "", fmt.Errorf("%s: the %s is %d bytes; the limit is %s", fn, what, n, schema.FormatSize(maxKeyBytes))
	}
	return getString(v, fn+": the "+what)
}

func (c *call) componentLog(args, results []cval) error {
	if err := arity("log", args, results, 2, 0); err != nil {
		return err
	}
	level, err := getEnum(&args[0], "log: the level")
	if err != nil {
		return err
	}
	if n := stringLen(&args[1]); n > maxLogBytes {
		return fmt.Errorf("log: the message is %d bytes; the limit is %s", n, schema.FormatSize(maxLogBytes))
	}
	msg, err := getString(&args[1], "log: the message")
	if err != nil {
		return err
	}
	lv := LevelInfo
	switch level {
	case "debug":
		lv = LevelDebug
	case "warn":
		lv = LevelWarn
	case "error":
		lv = LevelError
	}
	if c.env.Log != nil {
		c.env.Log(lv, msg)
	}
	return nil
}

func (c *call) componentConfigGet(args, results []cval) error {
	if err := arity("config-get", args, results, 1, 1); err != nil {
		return err
	}
	key, err := argKey("config-get", "key", &args[0])
	if err != nil {
		return err
	}
	v, ok := c.env.Config[key]
	if !ok {
		setOption(&results[0], nil)
		return nil
	}
	var s cval
	setString(&s, validUTF8(string(v)))
	setOption(&results[0], &s)
	return nil
}

func (c *call) componentKV(fn string) (KV, error) {
	if c.env.KV == nil {
		return nil, fmt.Errorf("%s: this call has no key-value scope", fn)
	}
	return c.env.KV, nil
}

func (c *call) componentKVGet(args, results []cval) error {
	if err := arity("kv-get", args, results, 1, 1); err != nil {
		return err
	}
	key, err := argKey("kv-get", "key", &args[0])
	if err != nil {
		return err
	}
	kv, err := c.componentKV("kv-get")
	if err != nil {
		return err
	}
	v, ok, err := kv.Get(c.ctx, key)
	if err != nil {
		return fmt.Errorf("kv-get %q: %v", key, err)
	}
	if !ok {
		setOption(&results[0], nil)
		return nil
	}
	var b cval
	setBytes(&b, v)
	setOption(&results[0], &b)
	return nil
}

func (c *call) componentKVSet(args, results []cval) error {
	if err := arity("kv-set", args, results, 2, 0); err != nil {
		return err
	}
	key, err := argKey("kv-set", "key", &args[0])
	if err != nil {
		return err
	}
	val, err := getBytes(&args[1], "kv-set: the value", maxValueBytes)
	if err != nil {
		return err
	}
	kv, err := c.componentKV("kv-set")
	if err != nil {
		return err
	}
	if err := kv.Set(c.ctx, key, val); err != nil {
		return fmt.Errorf("kv-set %q: %v", key, err)
	}
	return nil
}

func (c *call) componentKVDelete(args, results []cval) error {
	if err := arity("kv-delete", args, results, 1, 0); err != nil {
		return err
	}
	key, err := argKey("kv-delete", "key", &args[0])
	if err != nil {
		return err
	}
	kv, err := c.componentKV("kv-delete")
	if err != nil {
		return err
	}
	if err := kv.Delete(c.ctx, key); err != nil {
		return fmt.Errorf("kv-delete %q: %v", key, err)
	}
	return nil
}

// artifactRef is docs/reference/abi-v1.md's answer to artifact_write.
type artifactRef struct {
	ArtifactID  string `json:"artifact_id"`
	ContentType string `json:"content_type"`
	Size        uint64 `json:"size"`
}

func (c *call) componentArtifactWrite(args, results []cval) error {
	if err := arity("artifact-write", args, results, 2, 1); err != nil {
		return err
	}
	ct, err := argKey("artifact-write", "content type", &args[0])
	if err != nil {
		return err
	}
	data, err := getBytes(&args[1], "artifact-write: the data", maxComponentBytes)
	if err != nil {
		return err
	}
	fail := func(msg string) error {
		var s cval
		setString(&s, validUTF8(msg))
		setResult(&results[0], false, &s)
		return nil
	}
	if c.env.Artifacts == nil {
		return fail("this call has no artifact store")
	}
	refJSON, err := c.env.Artifacts.Write(c.ctx, ct, data)
	if err != nil {
		return fail(err.Error())
	}
	var ref artifactRef
	if err := json.Unmarshal(refJSON, &ref); err != nil {
		return fmt.Errorf("artifact-write: the store answered %q: %v", refJSON, err)
	}
	var rec cval
	f := setRecord(&rec, "artifact-id", "content-type", "size")
	setString(f[0], ref.ArtifactID)
	setString(f[1], validUTF8(ref.ContentType))
	setU64(f[2], ref.Size)
	setResult(&results[0], true, &rec)
	return nil
}

func (c *call) componentArtifactRead(args, results []cval) error {
	if err := arity("artifact-read", args, results, 1, 1); err != nil {
		return err
	}
	id, err := argKey("artifact-read", "id", &args[0])
	if err != nil {
		return err
	}
	if c.env.Artifacts == nil {
		return errors.New("artifact-read: this call has no artifact store")
	}
	data, err := c.env.Artifacts.Read(c.ctx, id)
	if errors.Is(err, ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		setOption(&results[0], nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("artifact-read %q: %v", id, err)
	}
	if len(data) > maxComponentBytes {
		return fmt.Errorf("artifact-read %q: the artifact is %s; a component can read at most %s at once", id, schema.FormatSize(int64(len(data))), schema.FormatSize(maxComponentBytes))
	}
	var b cval
	setBytes(&b, data)
	setOption(&results[0], &b)
	return nil
}

func (c *call) componentHTTPRequest(args, results []cval) error {
	if err := arity("http-request", args, results, 1, 1); err != nil {
		return err
	}
	f, err := getRecord(&args[0], "http-request: the request")
	if err != nil {
		return err
	}
	var req httpRequest
	if req.Method, err = getString(field(f, "method"), "outgoing-request.method"); err != nil {
		return err
	}
	if req.URL, err = getString(field(f, "url"), "outgoing-request.url"); err != nil {
		return err
	}
	if headers, err := getList(field(f, "headers"), kindList, "outgoing-request.headers"); err != nil {
		return err
	} else if len(headers) > maxComponentHeaders {
		return fmt.Errorf("http-request: %d headers; the limit is %d", len(headers), maxComponentHeaders)
	}
	if req.Headers, err = getPairs(field(f, "headers"), "outgoing-request.headers"); err != nil {
		return err
	}
	body, err := getBytes(field(f, "body"), "outgoing-request.body", maxComponentBytes)
	if err != nil {
		return err
	}
	req.BodyBase64 = base64.StdEncoding.EncodeToString(body)
	timeout, err := getOption(field(f, "timeout-ms"), "outgoing-request.timeout-ms")
	if err != nil {
		return err
	}
	if timeout != nil {
		ms, err := getU64(timeout, "outgoing-request.timeout-ms")
		if err != nil {
			return err
		}
		req.TimeoutMs = int64(min(ms, 1<<53))
	}
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("http-request: %v", err)
	}
	respJSON, violation, err := c.env.HTTP.Do(c.ctx, reqJSON)
	if err != nil {
		return fmt.Errorf("http-request: %v", err)
	}
	if violation != "" && c.violation == "" {
		c.violation = violation
	}
	var failure httpFailure
	if json.Unmarshal(respJSON, &failure) == nil && failure.Error != "" {
		var rec cval
		ef := setRecord(&rec, "kind", "message")
		kind := "network"
		if failure.Kind == "sandbox_violation" {
			kind = "sandbox-violation"
		}
		setEnum(ef[0], kind)
		setString(ef[1], validUTF8(failure.Error))
		setResult(&results[0], false, &rec)
		return nil
	}
	var resp httpResponse
	if err := json.Unmarshal(respJSON, &resp); err != nil {
		return fmt.Errorf("http-request: %v", err)
	}
	respBody, err := base64.StdEncoding.DecodeString(resp.BodyBase64)
	if err != nil {
		return fmt.Errorf("http-request: %v", err)
	}
	if len(respBody) > maxComponentBytes {
		var rec cval
		ef := setRecord(&rec, "kind", "message")
		setEnum(ef[0], "network")
		setString(ef[1], fmt.Sprintf("the response body is %s; a component can receive at most %s", schema.FormatSize(int64(len(respBody))), schema.FormatSize(maxComponentBytes)))
		setResult(&results[0], false, &rec)
		return nil
	}
	var rec cval
	rf := setRecord(&rec, "status", "headers", "body")
	setU16(rf[0], uint16(resp.Status))
	setPairs(rf[1], pairs(resp.Headers))
	setBytes(rf[2], respBody)
	setResult(&results[0], true, &rec)
	return nil
}
