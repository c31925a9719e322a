package registry

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseManifestValid(t *testing.T) {
	m, err := ParseManifest(mustJSON(t, testManifest(testDigest)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "acme/mailer" || m.Version != "1.2.3" || m.ABI != 1 || m.Digest != testDigest {
		t.Errorf("decoded %+v", m)
	}
	if got := m.MaxMemoryBytes(); got != 64<<20 {
		t.Errorf("MaxMemoryBytes = %d, want %d", got, 64<<20)
	}
	if got := m.TaskNames(); len(got) != 1 || got[0] != "send" {
		t.Errorf("TaskNames = %v", got)
	}
	tr := m.Triggers["row-added"]
	if tr.TriggerType.Type != TriggerPoll || tr.TriggerType.IntervalMS != 30000 {
		t.Errorf("trigger = %+v", tr)
	}
	if m.Ref() != "acme/mailer@1.2.3" || m.PackageFileName() != "acme-mailer-1.2.3.fcpkg" {
		t.Errorf("Ref %q, PackageFileName %q", m.Ref(), m.PackageFileName())
	}
	if err := m.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestParseManifestProblems(t *testing.T) {
	del := func(path ...string) func(map[string]any) {
		return func(m map[string]any) {
			for _, p := range path[:len(path)-1] {
				m = m[p].(map[string]any)
			}
			delete(m, path[len(path)-1])
		}
	}
	set := func(v any, path ...string) func(map[string]any) {
		return func(m map[string]any) {
			for _, p := range path[:len(path)-1] {
				m = m[p].(map[string]any)
			}
			m[path[len(path)-1]] = v
		}
	}
	tests := []struct {
		name   string
		change func(map[string]any)
		want   string // "" for a valid manifest
	}{
		{"prerelease version", set("1.2.3-rc.1+build.5", "version"), ""},
		{"max_memory in bytes", set(1048576, "limits", "max_memory"), ""},
		{"max_memory 1GiB", set("1GiB", "limits", "max_memory"), ""},
		{"max_memory 512KiB", set("512KiB", "limits", "max_memory"), ""},
		{"no limits", del("limits"), ""},
		{"no capabilities", del("capabilities"), ""},
		{"only triggers", del("tasks"), ""},
		{"only tasks", del("triggers"), ""},
		{"webhook", set(map[string]any{"type": "webhook"}, "triggers", "row-added", "trigger_type"), ""},
		{"no schemas", func(m map[string]any) { m["tasks"] = map[string]any{"send": map[string]any{}} }, ""},
		{"wildcard host", set([]any{"*.example.com", "https://api.example.com:8443"}, "capabilities", "allowed_hosts"), ""},

		{"name missing", del("name"), `manifest.json: "name" is missing`},
		{"name uppercase", set("Acme/Mailer", "name"), `manifest.json: "name" "Acme/Mailer" is not a valid name: a name is org/name`},
		{"name without org", set("mailer", "name"), `"name" "mailer" is not a valid name`},
		{"name with --", set("acme--x/mailer", "name"), `"name" "acme--x/mailer" is not a valid name`},
		{"name with space", set("acme/my mailer", "name"), `"name" "acme/my mailer" is not a valid name`},
		{"name a number", set(7, "name"), `manifest.json: "name" must be a string, not 7`},
		{"version missing", del("version"), `manifest.json: "version" is missing`},
		{"version 1.2", set("1.2", "version"), `manifest.json: "version" "1.2" is not a semantic version (MAJOR.MINOR.PATCH)`},
		{"version with v", set("v1.2.3", "version"), `"version" "v1.2.3" is not a semantic version`},
		{"version leading zero", set("01.2.3", "version"), `"version" "01.2.3" is not a semantic version`},
		{"version four parts", set("1.2.3.4", "version"), `"version" "1.2.3.4" is not a semantic version`},
		{"version a number", set(1.2, "version"), `"version" must be a string, not 1.2`},
		{"abi 2, a component", set(2, "abi"), ""},
		{"abi missing", del("abi"), `manifest.json: "abi" is missing; set it to what component.wasm is: 1 (a core module of host ABI v1) or 2 (a component of world fuscia:host/component@1.0.0)`},
		{"abi 3", set(3, "abi"), `manifest.json: "abi" 3 is not supported: it must be 1 (a core module of host ABI v1) or 2 (a component of world fuscia:host/component@1.0.0)`},
		{"abi 0", set(0, "abi"), `manifest.json: "abi" is missing`},
		{"abi negative", set(-1, "abi"), `manifest.json: "abi" -1 is not supported: it must be 1`},
		{"abi a string", set("1", "abi"), `manifest.json: "abi" must be 1 (a core module of host ABI v1) or 2 (a component of world fuscia:host/component@1.0.0), not a string`},
		{"abi a fraction", set(1.5, "abi"), `manifest.json: "abi" must be 1 (a core module of host ABI v1) or 2 (a component of world fuscia:host/component@1.0.0), not 1.5`},
		{"digest missing", del("digest"), `manifest.json: "digest" is missing`},
		{"digest short", set("sha256:abc", "digest"), `manifest.json: "digest" "sha256:abc" is not "sha256:" followed by 64 lowercase hex digits`},
		{"digest upper case", set(strings.ToUpper(testDigest), "digest"), `"digest" "SHA256:`},
		{"digest md5", set("md5:0123456789abcdef0123456789abcdef", "digest"), `"digest" "md5:`},
		{"unknown field", set("red", "colour"), `manifest.json: "colour" is not a field of the manifest`},
		{"capabilities not an object", set([]any{}, "capabilities"), `manifest.json: "capabilities" must be a JSON object, not an array`},
		{"unknown capability", set([]any{}, "capabilities", "allowed_ports"), `"capabilities.allowed_ports" is not a field of capabilities`},
		{"hosts not an array", set("smtp.example.com", "capabilities", "allowed_hosts"), `"capabilities.allowed_hosts" must be an array of strings, not a string`},
		{"host with a path", set([]any{"example.com/api"}, "capabilities", "allowed_hosts"), `"capabilities.allowed_hosts[0]" "example.com/api" is not a host pattern`},
		{"empty host", set([]any{"a.com", ""}, "capabilities", "allowed_hosts"), `"capabilities.allowed_hosts[1]" "" is not a host pattern`},
		{"bad wildcard", set([]any{"api.*.com"}, "capabilities", "allowed_hosts"), `"capabilities.allowed_hosts[0]" "api.*.com" is not a host pattern`},
		{"relative path", set([]any{"data"}, "capabilities", "allowed_paths"), `"capabilities.allowed_paths[0]" "data" is not a clean absolute path`},
		{"unclean path", set([]any{"/data/../etc"}, "capabilities", "allowed_paths"), `"capabilities.allowed_paths[0]" "/data/../etc" is not a clean absolute path`},
		{"max_memory bad unit", set("64Mb", "limits", "max_memory"), `manifest.json: "limits.max_memory" "64Mb" is not a size: a size is a whole number of bytes`},
		{"max_memory negative", set(-5, "limits", "max_memory"), `"limits.max_memory" "-5" is not a size: a size must not be negative`},
		{"max_memory fraction", set(1.5, "limits", "max_memory"), `"limits.max_memory" "1.5" is not a size`},
		{"max_memory tiny", set(1000, "limits", "max_memory"), `"limits.max_memory" "1000" is less than one Wasm page (64KiB)`},
		{"max_memory a boolean", set(true, "limits", "max_memory"), `"limits.max_memory" must be a number of bytes or a string like "64MiB", not true`},
		{"max_fuel negative", set(-1, "limits", "max_fuel"), `"limits.max_fuel" must be a whole number, not -1`},
		{"no tasks or triggers", func(m map[string]any) { delete(m, "tasks"); delete(m, "triggers") }, `manifest.json: "tasks" and "triggers" are both empty`},
		{"empty tasks and triggers", func(m map[string]any) { m["tasks"] = map[string]any{}; m["triggers"] = map[string]any{} }, `"tasks" and "triggers" are both empty`},
		{"task name", func(m map[string]any) { m["tasks"].(map[string]any)["Send"] = map[string]any{} }, `manifest.json: "tasks.Send" is not a valid task name`},
		{"task name digit", func(m map[string]any) { m["tasks"].(map[string]any)["1send"] = map[string]any{} }, `"tasks.1send" is not a valid task name`},
		{"trigger name", func(m map[string]any) {
			m["triggers"].(map[string]any)["row.added"] = map[string]any{"trigger_type": map[string]any{"type": "webhook"}}
		}, `"triggers.row.added" is not a valid trigger name`},
		{"task not an object", set("send mail", "tasks", "send"), `"tasks.send" must be a JSON object, not a string`},
		{"unknown task field", set(map[string]any{}, "tasks", "send", "schemma"), `"tasks.send.schemma" is not a field of a task; the fields are description, schema, output_schema`},
		{"schema not an object", set("object", "tasks", "send", "schema"), `manifest.json: "tasks.send.schema" must be a JSON object (a JSON Schema), not a string`},
		{"schema a boolean", set(true, "tasks", "send", "schema"), `"tasks.send.schema" must be a JSON object (a JSON Schema), not a boolean`},
		{"schema does not compile", set(map[string]any{"type": 5}, "tasks", "send", "schema"), `manifest.json: "tasks.send.schema" is not a valid JSON Schema`},
		{"output schema does not compile", set(map[string]any{"minimum": "zero"}, "tasks", "send", "output_schema"), `"tasks.send.output_schema" is not a valid JSON Schema`},
		{"schema external ref", set(map[string]any{"$ref": "https://example.com/s.json"}, "tasks", "send", "schema"), `"tasks.send.schema" is not a valid JSON Schema`},
		{"trigger schema", set(map[string]any{"type": "objekt"}, "triggers", "row-added", "schema"), `"triggers.row-added.schema" is not a valid JSON Schema`},
		{"poll without interval", del("triggers", "row-added", "trigger_type", "interval_ms"),
			`manifest.json: "triggers.row-added.trigger_type.interval_ms" must be more than 0 for a poll trigger`},
		{"poll interval 0", set(0, "triggers", "row-added", "trigger_type", "interval_ms"), `"triggers.row-added.trigger_type.interval_ms" must be more than 0`},
		{"poll interval negative", set(-10, "triggers", "row-added", "trigger_type", "interval_ms"), `"triggers.row-added.trigger_type.interval_ms" must be more than 0`},
		{"interval a string", set("30s", "triggers", "row-added", "trigger_type", "interval_ms"), `"triggers.row-added.trigger_type.interval_ms" must be a whole number of milliseconds, not a string`},
		{"webhook with interval", set(map[string]any{"type": "webhook", "interval_ms": 5}, "triggers", "row-added", "trigger_type"), `"triggers.row-added.trigger_type.interval_ms" is only for poll triggers`},
		{"trigger type unknown", set("cron", "triggers", "row-added", "trigger_type", "type"), `manifest.json: "triggers.row-added.trigger_type.type" "cron" is not a trigger type; use "poll" or "webhook"`},
		{"trigger type missing", del("triggers", "row-added", "trigger_type"), `"triggers.row-added.trigger_type.type" is missing`},
		{"unknown trigger_type field", set(1, "triggers", "row-added", "trigger_type", "every"), `"triggers.row-added.trigger_type.every" is not a field of a trigger_type`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest(testDigest)
			tt.change(m)
			_, err := ParseManifest(mustJSON(t, m))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("want a valid manifest, got:\n%v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error containing %q, got none", tt.want)
			}
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("error is %T, want *ManifestError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error does not contain %q:\n%v", tt.want, err)
			}
			for _, line := range me.Problems {
				if !strings.HasPrefix(line, "manifest.json: ") {
					t.Errorf("problem %q does not start with manifest.json: ", line)
				}
			}
		})
	}
}

// TestParseManifestAllProblems: every problem is reported at once, each once.
func TestParseManifestAllProblems(t *testing.T) {
	m := testManifest("sha256:nope")
	m["name"] = "Acme"
	m["version"] = "1.2"
	m["abi"] = 3
	m["colour"] = "red"
	m["limits"] = map[string]any{"max_memory": "lots"}
	m["tasks"].(map[string]any)["send"].(map[string]any)["schema"] = map[string]any{"type": 5}
	m["triggers"].(map[string]any)["row-added"].(map[string]any)["trigger_type"] = map[string]any{"type": "poll"}
	_, err := ParseManifest(mustJSON(t, m))
	var me *ManifestError
	if !errors.As(err, &me) {
		t.Fatalf("want a *ManifestError, got %v", err)
	}
	for _, field := range []string{"name", "version", "abi", "digest", "colour", "limits.max_memory", "tasks.send.schema", "triggers.row-added.trigger_type.interval_ms"} {
		n := 0
		for _, p := range me.Problems {
			if strings.HasPrefix(p, `manifest.json: "`+field+`" `) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d problems about %q, want 1:\n%v", n, field, err)
		}
	}
	if len(me.Problems) != 8 {
		t.Errorf("%d problems, want 8:\n%v", len(me.Problems), err)
	}
}

func TestParseManifestNotAnObject(t *testing.T) {
	for _, src := range []string{``, `not json`, `[1, 2]`, `null`, `"acme/mailer"`, `{"name": "acme/mailer",}`} {
		_, err := ParseManifest([]byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), "manifest.json: is not a JSON object") {
			t.Errorf("%q: got %v, want manifest.json: is not a JSON object", src, err)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"64MiB", 64 << 20, true},
		{"1GiB", 1 << 30, true},
		{"512KiB", 512 << 10, true},
		{"1048576", 1 << 20, true},
		{"64 MiB", 64 << 20, true},
		{"10MB", 10_000_000, true},
		{"64mib", 0, false},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5GiB", 0, false},
		{"99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestSizeJSON(t *testing.T) {
	for _, tt := range []struct{ in, out string }{
		{`"64MiB"`, `"64MiB"`},
		{`1048576`, `1048576`},
		{`"1048576"`, `1048576`},
	} {
		var s Size
		if err := json.Unmarshal([]byte(tt.in), &s); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		out, err := json.Marshal(s)
		if err != nil || string(out) != tt.out {
			t.Errorf("%s → %s, %v; want %s", tt.in, out, err, tt.out)
		}
	}
	var s Size
	if err := json.Unmarshal([]byte(`[1]`), &s); err == nil {
		t.Error("an array decoded as a Size")
	}
	if got := (&Manifest{}).MaxMemoryBytes(); got != 0 {
		t.Errorf("MaxMemoryBytes of an unset limit = %d, want 0", got)
	}
}
