package registry

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The manifest's fields are written down in several places on purpose: the Manifest structs'
// json tags, the field lists decodeManifest checks for unknown fields (manifestFields, …), and
// the user docs (docs/components.md: an example manifest and a table with a rule per field).
// There is no JSON Schema of the manifest in the repository; if one is added, compare it here
// too. These tests fail when one copy gains, loses or renames a field without the others.
//
// Fields are named by dotted paths from the manifest's top: "capabilities.allowed_hosts".
// The entries of the tasks and triggers maps are written "*": "tasks.*.output_schema".

// manifestDocs is the user documentation of the manifest: the file and the heading of the
// section that holds its example and its table. (docs/reference/abi-v1.md, the ABI's
// reference, may document the manifest too; add it here when it does, in the same form.)
var manifestDocs = []struct{ file, heading string }{
	{"../../docs/components.md", "## The manifest"},
}

// manifestPaths returns every field of Manifest, by its json tag, in declaration order; leaf
// reports whether a path is a value rather than an object the manifest describes field by
// field.
func manifestPaths() (paths []string, leaf map[string]bool, objects map[string][]string) {
	leaf = map[string]bool{}
	objects = map[string][]string{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		obj := strings.TrimSuffix(prefix, ".")
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			p := prefix + name
			paths = append(paths, p)
			objects[obj] = append(objects[obj], name)
			switch {
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, p+".")
			case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct:
				walk(f.Type.Elem(), p+".*.")
			default:
				leaf[p] = true
			}
		}
	}
	walk(reflect.TypeFor[Manifest](), "")
	return paths, leaf, objects
}

// TestManifestFieldListsDrift: decodeManifest's lists of known fields are the structs' json
// tags, object by object and in the same order (the order its messages list them in).
func TestManifestFieldListsDrift(t *testing.T) {
	_, _, objects := manifestPaths()
	lists := map[string][]string{
		"":                        manifestFields,
		"capabilities":            capabilitiesFields,
		"limits":                  limitsFields,
		"tasks.*":                 taskFields,
		"triggers.*":              triggerFields,
		"triggers.*.trigger_type": triggerTypeFields,
	}
	for obj, tags := range objects {
		list, ok := lists[obj]
		if !ok {
			t.Errorf("the manifest's structs have an object %q that decodeManifest has no list of fields for", obj)
			continue
		}
		if !slices.Equal(list, tags) {
			t.Errorf("object %q: decodeManifest knows the fields %v; the structs' json tags are %v", obj, list, tags)
		}
	}
	for obj := range lists {
		if _, ok := objects[obj]; !ok {
			t.Errorf("decodeManifest lists fields of an object %q that the manifest's structs do not have", obj)
		}
	}
}

// TestManifestDocsDrift: the docs' example manifest has every field and no other, and their
// table has a row for every field that holds a value and none for a field that does not exist.
//
// The table names fields as a reader scans them, so a name N in a row's first column documents
// the path P when: N is P ("capabilities.allowed_hosts"); or N is P within a task or trigger
// ("trigger_type.type" for "triggers.*.trigger_type.type", "description" for
// "tasks.*.description" as well as for the top-level "description"); or N is "…X" and P ends
// with the segments X ("…schema" for "tasks.*.schema" and "triggers.*.schema"). Objects
// (capabilities, limits, trigger_type) need no row of their own: their fields have rows.
func TestManifestDocsDrift(t *testing.T) {
	paths, leaf, _ := manifestPaths()
	for _, doc := range manifestDocs {
		section := docSection(t, doc.file, doc.heading)

		example := exampleManifestPaths(t, doc.file, section, leaf)
		for _, p := range paths {
			if !slices.Contains(example, p) {
				t.Errorf("%s: the example manifest under %q has no field %s", doc.file, doc.heading, p)
			}
		}
		for _, p := range example {
			if !slices.Contains(paths, p) {
				t.Errorf("%s: the example manifest under %q has the field %s, which the manifest (hostabi/registry/manifest.go) does not", doc.file, doc.heading, p)
			}
		}

		names := tableFieldNames(t, doc.file, section)
		for _, p := range paths {
			if !leaf[p] {
				continue
			}
			if !slices.ContainsFunc(names, func(n string) bool { return documents(n, p) }) {
				t.Errorf("%s: the table under %q has no row for the field %s", doc.file, doc.heading, p)
			}
		}
		for _, n := range names {
			if !slices.ContainsFunc(paths, func(p string) bool { return documents(n, p) }) {
				t.Errorf("%s: the table under %q has a row for %q, which is no field of the manifest (hostabi/registry/manifest.go)", doc.file, doc.heading, n)
			}
		}
	}
}

// documents reports whether the table's name n stands for the path p (see TestManifestDocsDrift).
func documents(n, p string) bool {
	if rest, ok := strings.CutPrefix(n, "…"); ok {
		return p == rest || strings.HasSuffix(p, "."+rest)
	}
	if n == p {
		return true
	}
	for _, entry := range []string{"tasks.*.", "triggers.*."} {
		if rel, ok := strings.CutPrefix(p, entry); ok && rel == n {
			return true
		}
	}
	return false
}

// docSection returns the text of file from the line heading to the next heading of the same
// level or higher.
func docSection(t *testing.T, file, heading string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("%s has no heading %q", file, heading)
	}
	level := strings.IndexByte(heading, ' ')
	end := len(lines)
	inFence := false
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "```") {
			inFence = !inFence
		}
		if inFence {
			continue
		}
		if h := strings.IndexByte(lines[i], ' '); h > 0 && h <= level && strings.Trim(lines[i][:h], "#") == "" {
			end = i
			break
		}
	}
	return strings.Join(lines[start:end], "\n")
}

// exampleManifestPaths decodes the section's first ```json block, with "{…}" standing for an
// empty object, and returns the paths of its fields: the names of tasks and triggers become
// "*", and a field that holds a value (a schema) is not looked into.
func exampleManifestPaths(t *testing.T, file, section string, leaf map[string]bool) []string {
	t.Helper()
	m := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("%s: the manifest section has no ```json example", file)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(m[1], "{…}", "{}")), &doc); err != nil {
		t.Fatalf("%s: the example manifest is not JSON (with {…} read as {}): %v", file, err)
	}
	var paths []string
	var walk func(obj map[string]any, prefix string)
	walk = func(obj map[string]any, prefix string) {
		for k, v := range obj {
			if prefix == "tasks." || prefix == "triggers." {
				k = "*"
			}
			p := prefix + k
			if k != "*" && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
			if sub, ok := v.(map[string]any); ok && !leaf[p] {
				walk(sub, p+".")
			}
		}
	}
	walk(doc, "")
	return paths
}

// tableFieldNames returns the names in backquotes in the first column of the section's table
// whose header's first cell is "field".
func tableFieldNames(t *testing.T, file, section string) []string {
	t.Helper()
	var names []string
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 3 || cells[0] != "" {
			inTable = false
			continue
		}
		first := strings.TrimSpace(cells[1])
		switch {
		case first == "field":
			inTable = true
		case !inTable || strings.Trim(first, "-: ") == "":
		default:
			for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
				names = append(names, m[1])
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: found no table with a first column \"field\" in the manifest section", file)
	}
	return names
}
