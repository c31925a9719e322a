package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/hashicorp/go-version"

	abiversion "github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang/schema"
)

// The files of a component package and of an installed component (docs/reference/abi-v1.md, "Component
// packages").
const (
	ManifestFile = "manifest.json"
	WasmFile     = "component.wasm"
	ReadmeFile   = "README.md"
	AssetsDir    = "assets"
)

// Trigger types of a manifest's trigger_type.type.
const (
	TriggerPoll    = "poll"
	TriggerWebhook = "webhook"
)

// minMaxMemory is the smallest limits.max_memory accepted: one Wasm page.
const minMaxMemory = 64 << 10

// Manifest is a component's manifest.json (docs/reference/abi-v1.md, "Component packages").
//
// ParseManifest decodes it strictly (an unknown field is a problem) and validates it; a
// Manifest from Installed.Parsed is decoded leniently and not validated again.
type Manifest struct {
	// Name is org/name: lowercase letters and digits, with single "-" or "_" between them, in
	// each part.
	Name string `json:"name"`
	// Version is a semantic version, MAJOR.MINOR.PATCH with an optional -prerelease and
	// +build.
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	// ABI says what component.wasm is: version.ABI (1), a core module of the host ABI v1, or
	// version.ComponentABI (2), a component of the world version.World. Pack and install
	// check the binary against it (CheckABI).
	ABI int `json:"abi"`
	// Digest is "sha256:" and the lowercase hex SHA-256 of component.wasm. Pack writes it.
	Digest       string       `json:"digest"`
	Capabilities Capabilities `json:"capabilities"`
	Limits       Limits       `json:"limits,omitzero"`
	// Tasks and Triggers are keyed by name ([a-z][a-z0-9_-]*). A component has at least one
	// task or trigger.
	Tasks    map[string]Task    `json:"tasks,omitempty"`
	Triggers map[string]Trigger `json:"triggers,omitempty"`
}

// Capabilities are what a component may reach; a workflow may only narrow them.
type Capabilities struct {
	// AllowedHosts are host patterns for http_request: "api.example.com", "*.example.com",
	// optionally with "scheme://" and ":port".
	AllowedHosts []string `json:"allowed_hosts"`
	// AllowedPaths are absolute directories preopened for WASI at the same path.
	AllowedPaths []string `json:"allowed_paths"`
}

// Limits bound a component's resources.
type Limits struct {
	// MaxMemory caps the module's linear memory; empty means the host's default (256 MiB).
	MaxMemory Size `json:"max_memory,omitempty"`
	// MaxFuel is a CPU budget per attempt (wasmtime fuel); 0 means none.
	MaxFuel uint64 `json:"max_fuel,omitempty"`
}

// Task is one task a component implements.
type Task struct {
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the task's input, or nil (inputs are then not checked).
	Schema json.RawMessage `json:"schema,omitempty"`
	// OutputSchema is the JSON Schema of the task's output, or nil.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Trigger is one trigger a component implements.
type Trigger struct {
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the trigger's configuration, or nil.
	Schema      json.RawMessage `json:"schema,omitempty"`
	TriggerType TriggerType     `json:"trigger_type"`
}

// TriggerType says how the host invokes a trigger.
type TriggerType struct {
	// Type is TriggerPoll or TriggerWebhook.
	Type string `json:"type"`
	// IntervalMS is the poll interval in milliseconds: more than 0 for a poll trigger, 0 (unset)
	// for a webhook.
	IntervalMS int64 `json:"interval_ms,omitempty"`
}

// Size is a byte size as written in a manifest: a JSON number of bytes, or a string that
// ParseSize reads ("64MiB"). It keeps the form it was written in, so a packed manifest reads as
// its author wrote it.
type Size string

// UnmarshalJSON accepts a JSON string or number; whether it is a valid size is checked by
// validation (Bytes).
func (s *Size) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		*s = Size(str)
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*s = Size(b)
	default:
		return fmt.Errorf("a size is a number of bytes or a string like \"64MiB\", not %s", jsonKind(b))
	}
	return nil
}

// MarshalJSON writes a size of bare digits as a JSON number and anything else as a string.
func (s Size) MarshalJSON() ([]byte, error) {
	if s != "" && strings.Trim(string(s), "0123456789") == "" {
		return []byte(s), nil
	}
	return json.Marshal(string(s))
}

// Bytes returns the size in bytes (ParseSize).
func (s Size) Bytes() (int64, error) { return ParseSize(string(s)) }

// ParseSize parses a byte size: a whole number of bytes ("1048576", "100B"), or a whole number
// with a binary unit ("512KiB", "64MiB", "1GiB", "1TiB") or a decimal one ("10kB", "10MB",
// "1GB"). A space may separate the number from the unit. It reads sizes exactly as the "size"
// format of workflow schemas does, and its error says which forms are accepted.
func ParseSize(s string) (int64, error) { return schema.ParseSize(s) }

// MaxMemoryBytes returns limits.max_memory in bytes, or 0 when it is unset (or invalid, which
// a validated manifest is not).
func (m *Manifest) MaxMemoryBytes() int64 {
	if m.Limits.MaxMemory == "" {
		return 0
	}
	n, err := m.Limits.MaxMemory.Bytes()
	if err != nil {
		return 0
	}
	return n
}

// IsComponent reports whether the manifest's component.wasm is a component (component model)
// rather than a core module of the host ABI v1.
func (m *Manifest) IsComponent() bool { return m.ABI == abiversion.ComponentABI }

// Ref is "org/name@version".
func (m *Manifest) Ref() string { return m.Name + "@" + m.Version }

// PackageFileName is the conventional file name of the component's package,
// NAME-VERSION.fcpkg with the name's "/" replaced by "-": "acme-mailer-1.2.3.fcpkg".
func (m *Manifest) PackageFileName() string {
	return strings.ReplaceAll(m.Name, "/", "-") + "-" + m.Version + ".fcpkg"
}

// TaskNames returns the names of the tasks, sorted.
func (m *Manifest) TaskNames() []string { return sortedKeys(m.Tasks) }

// TriggerNames returns the names of the triggers, sorted.
func (m *Manifest) TriggerNames() []string { return sortedKeys(m.Triggers) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ManifestError lists every problem of a manifest, one per line, each naming the field at
// fault: `manifest.json: "version" "1.2" is not a semantic version (MAJOR.MINOR.PATCH)`.
type ManifestError struct {
	Problems []string // sorted
}

func (e *ManifestError) Error() string { return strings.Join(e.Problems, "\n") }

// ParseManifest decodes and validates a manifest.json. The decoding is strict: unknown fields
// and values of the wrong JSON type are problems. The error, a *ManifestError, reports every
// problem found, not only the first.
func ParseManifest(data []byte) (*Manifest, error) {
	m, d := decodeManifest(data)
	if m != nil {
		m.check(d)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return m, nil
}

// Validate checks a manifest built in code the way ParseManifest checks a decoded one. Its
// error is a *ManifestError.
func (m *Manifest) Validate() error {
	d := newProblems()
	m.check(d)
	return d.err()
}

// problems collects the problems of a manifest. bad holds the fields that could not be decoded,
// so that validation does not report them a second time.
type problems struct {
	list []string
	bad  map[string]bool
}

func newProblems() *problems { return &problems{bad: map[string]bool{}} }

// add records a problem of field; the message follows the quoted field name.
func (p *problems) add(field, format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf("%s: %q ", ManifestFile, field)+fmt.Sprintf(format, args...))
	p.bad[field] = true
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := slices.Clone(p.list)
	sort.Strings(list)
	return &ManifestError{Problems: slices.Compact(list)}
}

// Field names, in the order they are documented.
var (
	manifestFields     = []string{"name", "version", "description", "abi", "digest", "capabilities", "limits", "tasks", "triggers"}
	capabilitiesFields = []string{"allowed_hosts", "allowed_paths"}
	limitsFields       = []string{"max_memory", "max_fuel"}
	taskFields         = []string{"description", "schema", "output_schema"}
	triggerFields      = []string{"description", "schema", "trigger_type"}
	triggerTypeFields  = []string{"type", "interval_ms"}
)

// decodeManifest decodes data field by field, so that it can report every field of the wrong
// type and every unknown field. The Manifest is nil when data is not a JSON object.
func decodeManifest(data []byte) (*Manifest, *problems) {
	p := newProblems()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		reason := "it is " + jsonKind(bytes.TrimSpace(data))
		if err != nil {
			reason = err.Error()
		}
		p.list = append(p.list, fmt.Sprintf("%s: is not a JSON object (%s)", ManifestFile, reason))
		return nil, p
	}
	m := &Manifest{}
	p.unknown("", top, "the manifest", manifestFields)
	p.str("name", top["name"], &m.Name)
	p.str("version", top["version"], &m.Version)
	p.str("description", top["description"], &m.Description)
	p.value("abi", top["abi"], &m.ABI, "must be "+abiValues)
	p.str("digest", top["digest"], &m.Digest)
	if obj := p.object("capabilities", top["capabilities"], "capabilities", capabilitiesFields); obj != nil {
		p.strs("capabilities.allowed_hosts", obj["allowed_hosts"], &m.Capabilities.AllowedHosts)
		p.strs("capabilities.allowed_paths", obj["allowed_paths"], &m.Capabilities.AllowedPaths)
	}
	if obj := p.object("limits", top["limits"], "limits", limitsFields); obj != nil {
		p.value("limits.max_memory", obj["max_memory"], &m.Limits.MaxMemory, `must be a number of bytes or a string like "64MiB"`)
		p.value("limits.max_fuel", obj["max_fuel"], &m.Limits.MaxFuel, "must be a whole number")
	}
	if obj := p.object("tasks", top["tasks"], "", nil); obj != nil {
		m.Tasks = map[string]Task{}
		for name, raw := range obj {
			field := "tasks." + name
			var t Task
			if o := p.object(field, raw, "a task", taskFields); o != nil {
				p.str(field+".description", o["description"], &t.Description)
				t.Schema = nonNull(o["schema"])
				t.OutputSchema = nonNull(o["output_schema"])
			}
			m.Tasks[name] = t
		}
	}
	if obj := p.object("triggers", top["triggers"], "", nil); obj != nil {
		m.Triggers = map[string]Trigger{}
		for name, raw := range obj {
			field := "triggers." + name
			var t Trigger
			if o := p.object(field, raw, "a trigger", triggerFields); o != nil {
				p.str(field+".description", o["description"], &t.Description)
				t.Schema = nonNull(o["schema"])
				if tt := p.object(field+".trigger_type", o["trigger_type"], "a trigger_type", triggerTypeFields); tt != nil {
					p.str(field+".trigger_type.type", tt["type"], &t.TriggerType.Type)
					p.value(field+".trigger_type.interval_ms", tt["interval_ms"], &t.TriggerType.IntervalMS, "must be a whole number of milliseconds")
				}
			}
			m.Triggers[name] = t
		}
	}
	m.normalize()
	return m, p
}

// decodeLenient decodes an installed manifest for display and lookups: fields of the wrong type
// are left empty. It returns nil when raw is not a JSON object.
func decodeLenient(raw []byte) *Manifest {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil
	}
	m := &Manifest{}
	_ = json.Unmarshal(raw, m) // best effort: json fills what has the right type
	m.normalize()
	return m
}

// normalize makes absent lists empty, so that they encode as [] rather than null.
func (m *Manifest) normalize() {
	if m.Capabilities.AllowedHosts == nil {
		m.Capabilities.AllowedHosts = []string{}
	}
	if m.Capabilities.AllowedPaths == nil {
		m.Capabilities.AllowedPaths = []string{}
	}
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	return raw
}

// jsonKind names the kind of a JSON value from its first byte, for messages.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// unknown reports the keys of obj that are not among known.
func (p *problems) unknown(field string, obj map[string]json.RawMessage, what string, known []string) {
	for k := range obj {
		if !slices.Contains(known, k) {
			f := k
			if field != "" {
				f = field + "." + k
			}
			p.add(f, "is not a field of %s; the fields are %s", what, strings.Join(known, ", "))
		}
	}
}

// object decodes raw as a JSON object; with known set, it reports the keys not among known.
// It returns nil when raw is absent, null or not an object.
func (p *problems) object(field string, raw json.RawMessage, what string, known []string) map[string]json.RawMessage {
	if isNull(raw) {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		p.add(field, "must be a JSON object, not %s", jsonKind(raw))
		return nil
	}
	if known != nil {
		p.unknown(field, obj, what, known)
	}
	return obj
}

func (p *problems) str(field string, raw json.RawMessage, dst *string) {
	p.value(field, raw, dst, "must be a string")
}

func (p *problems) strs(field string, raw json.RawMessage, dst *[]string) {
	p.value(field, raw, dst, "must be an array of strings")
}

// value decodes raw into dst, or reports must (and what raw is) when it has the wrong type.
func (p *problems) value(field string, raw json.RawMessage, dst any, must string) {
	if isNull(raw) {
		return
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		p.add(field, "%s, not %s", must, describe(raw))
	}
}

// describe shows a short JSON value as it is, and names the kind of a long one.
func describe(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if k := jsonKind(t); k == "a number" || k == "a boolean" {
		if len(t) <= 20 {
			return string(t)
		}
		return k
	}
	return jsonKind(t)
}

var (
	// namePart is one part of org/name. Single separators only: "--" separates the parts of an
	// installed directory's name.
	namePart = lazyRegexp(`^[a-z0-9]+(?:[-_][a-z0-9]+)*$`)
	// nodeName is the name of a task or trigger.
	nodeName = lazyRegexp(`^[a-z][a-z0-9_-]*$`)
	// semverCore is MAJOR.MINOR.PATCH without leading zeros, then an optional -pre and +build
	// that go-version checks.
	semverCore = lazyRegexp(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+].*)?$`)
	digestRE   = lazyRegexp(`^sha256:[0-9a-f]{64}$`)
)

// validName returns why s is not a valid component name (org/name), or "".
func validName(s string) string {
	org, name, ok := strings.Cut(s, "/")
	if !ok || !namePart().MatchString(org) || !namePart().MatchString(name) {
		return `a name is org/name, each part lowercase letters and digits with single "-" or "_" between them, like "acme/mailer"`
	}
	return ""
}

// validVersion returns why s is not a semantic version, or "".
func validVersion(s string) string {
	if !semverCore().MatchString(s) {
		return "is not a semantic version (MAJOR.MINOR.PATCH)"
	}
	if _, err := version.NewSemver(s); err != nil {
		return "is not a semantic version (MAJOR.MINOR.PATCH, then an optional -prerelease and +build)"
	}
	return ""
}

// check validates m, adding its problems to p (skipping the fields p could not decode).
func (m *Manifest) check(p *problems) {
	ok := func(field string) bool { return !p.bad[field] }
	if ok("name") {
		if m.Name == "" {
			p.add("name", `is missing; give the component's name as org/name, like "acme/mailer"`)
		} else if reason := validName(m.Name); reason != "" {
			p.add("name", "%q is not a valid name: %s", m.Name, reason)
		}
	}
	if ok("version") {
		if m.Version == "" {
			p.add("version", `is missing; give a semantic version, like "1.2.3"`)
		} else if reason := validVersion(m.Version); reason != "" {
			p.add("version", "%q %s", m.Version, reason)
		}
	}
	if ok("abi") {
		switch m.ABI {
		case abiversion.ABI, abiversion.ComponentABI:
		case 0:
			p.add("abi", "is missing; set it to what component.wasm is: %s", abiValues)
		default:
			p.add("abi", "%s", abiMust(fmt.Sprintf("%d is not supported", m.ABI)))
		}
	}
	if ok("digest") {
		if m.Digest == "" {
			p.add("digest", "is missing; fuscia component pack writes the digest of component.wasm into it")
		} else if !digestRE().MatchString(m.Digest) {
			p.add("digest", `%q is not "sha256:" followed by 64 lowercase hex digits`, m.Digest)
		}
	}
	if ok("capabilities.allowed_hosts") {
		for i, h := range m.Capabilities.AllowedHosts {
			if reason := checkHostPattern(h); reason != "" {
				p.add(fmt.Sprintf("capabilities.allowed_hosts[%d]", i), "%q is not a host pattern: %s", h, reason)
			}
		}
	}
	if ok("capabilities.allowed_paths") {
		for i, d := range m.Capabilities.AllowedPaths {
			if !strings.HasPrefix(d, "/") || path.Clean(d) != d {
				p.add(fmt.Sprintf("capabilities.allowed_paths[%d]", i), "%q is not a clean absolute path, like \"/data/in\"", d)
			}
		}
	}
	if ok("limits.max_memory") && m.Limits.MaxMemory != "" {
		if n, err := m.Limits.MaxMemory.Bytes(); err != nil {
			reason := strings.TrimPrefix(err.Error(), fmt.Sprintf("invalid size %q: ", string(m.Limits.MaxMemory)))
			p.add("limits.max_memory", "%q is not a size: %s", string(m.Limits.MaxMemory), reason)
		} else if n < minMaxMemory {
			p.add("limits.max_memory", "%q is less than one Wasm page (64KiB)", string(m.Limits.MaxMemory))
		}
	}
	if ok("tasks") && ok("triggers") && len(m.Tasks) == 0 && len(m.Triggers) == 0 {
		p.add("tasks", `and "triggers" are both empty: a component declares at least one task or trigger`)
	}
	for _, name := range sortedKeys(m.Tasks) {
		t, field := m.Tasks[name], "tasks."+name
		if !nodeName().MatchString(name) {
			p.add(field, "is not a valid task name: a name starts with a lowercase letter, followed by lowercase letters, digits, _ and -")
		}
		m.checkSchema(p, field+".schema", t.Schema)
		m.checkSchema(p, field+".output_schema", t.OutputSchema)
	}
	for _, name := range sortedKeys(m.Triggers) {
		t, field := m.Triggers[name], "triggers."+name
		if !nodeName().MatchString(name) {
			p.add(field, "is not a valid trigger name: a name starts with a lowercase letter, followed by lowercase letters, digits, _ and -")
		}
		m.checkSchema(p, field+".schema", t.Schema)
		typ, interval := field+".trigger_type.type", field+".trigger_type.interval_ms"
		if !ok(typ) || !ok(interval) || !ok(field) || !ok(field+".trigger_type") {
			continue
		}
		switch t.TriggerType.Type {
		case TriggerPoll:
			if t.TriggerType.IntervalMS <= 0 {
				p.add(interval, "must be more than 0 for a poll trigger (how often the host polls, in milliseconds)")
			}
		case TriggerWebhook:
			if t.TriggerType.IntervalMS != 0 {
				p.add(interval, "is only for poll triggers; a webhook trigger runs when a request arrives")
			}
		case "":
			p.add(typ, `is missing; a trigger's type is "poll" or "webhook"`)
		default:
			p.add(typ, `%q is not a trigger type; use "poll" or "webhook"`, t.TriggerType.Type)
		}
	}
}

// checkSchema checks that raw, when present, is a JSON object that compiles as a JSON Schema,
// exactly as plan compiles it (lang/schema: draft 2020-12 by default, no external references).
func (m *Manifest) checkSchema(p *problems, field string, raw json.RawMessage) {
	if len(raw) == 0 || p.bad[field] {
		return
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		p.add(field, "must be a JSON object (a JSON Schema), not %s", jsonKind(t))
		return
	}
	if _, err := schema.Compile(field, raw); err != nil {
		msg := strings.TrimPrefix(err.Error(), "schema "+field)
		msg = strings.TrimSpace(strings.TrimPrefix(msg, ":"))
		if !strings.HasPrefix(msg, "is not a valid JSON Schema") {
			msg = "is not a valid JSON Schema: " + msg
		}
		p.add(field, "%s", msg)
	}
}

// checkHostPattern returns why h is not an allowed_hosts pattern ([scheme://]host[:port], host
// possibly "*.domain"), or "".
func checkHostPattern(h string) string {
	if h == "" {
		return "it is empty"
	}
	if strings.IndexFunc(h, unicode.IsSpace) >= 0 {
		return "it contains white space"
	}
	rest := h
	if scheme, after, ok := strings.Cut(h, "://"); ok {
		if scheme == "" {
			return "the scheme before :// is empty"
		}
		rest = after
	}
	if rest == "" || strings.ContainsAny(rest, "/?#@") {
		return "give a host, optionally with scheme:// and :port, and no path"
	}
	if strings.Contains(rest[1:], "*") || (strings.HasPrefix(rest, "*") && !strings.HasPrefix(rest, "*.")) {
		return `a wildcard is only allowed as the first label, like "*.example.com"`
	}
	return ""
}
