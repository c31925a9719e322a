package plan

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fuscia/fuscia/lang"
)

// A saved plan binds its members with a digest. The last member, integrityEntry, lists the
// SHA-256 of every other member by name; Decode refuses a file whose members differ from that
// list in any way: a member changed (a workflow source, the manifest with the plan, variables
// and locks), added, removed or renamed. So the plan a reviewer saw (the manifest, or the
// output of the `fuscia plan` that wrote the file) and the sources that run are the ones
// planned together.
//
// The digest is plain SHA-256, not a keyed MAC: a plan moves between machines (planned in CI,
// applied elsewhere) and no key is shared between them. It makes the file self-consistent and
// detects an edit or corruption; it does not stop someone who rewrites the whole file, digest
// included, who could as well rewrite what a reviewer of the file sees. To pin a reviewed plan,
// keep the file's own sha256 and compare it before apply (docs/security.md).
const integrityEntry = "fuscia-plan.sha256"

// ErrIntegrity is wrapped by the errors of a plan file whose members do not match its digest,
// or that has none (a file from before plans carried one, or written by hand).
var ErrIntegrity = errors.New("plan file failed its integrity check")

// integrityIndex is the content of integrityEntry. encoding/json writes map keys sorted, so
// the encoding is canonical.
type integrityIndex struct {
	Algorithm string            `json:"algorithm"`
	Members   map[string]string `json:"members"`
}

// sealMembers is the integrity entry of a plan made of members (name to content).
func sealMembers(members map[string][]byte) ([]byte, error) {
	idx := integrityIndex{Algorithm: "sha256", Members: make(map[string]string, len(members))}
	for name, data := range members {
		idx.Members[name] = memberDigest(data)
	}
	return json.Marshal(idx)
}

func memberDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// checkMembers verifies the members of a plan file (every zip member but the integrity entry,
// read in full) against the integrity entry raw. path names the file in messages.
func checkMembers(path string, raw []byte, members map[string][]byte) error {
	var idx integrityIndex
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&idx); err != nil || idx.Algorithm != "sha256" || len(idx.Members) == 0 {
		return fmt.Errorf("%w: %s: its digest (%s) is unreadable; run `fuscia plan -out` again", ErrIntegrity, path, integrityEntry)
	}
	var problems []string
	for _, name := range sortedKeys(members) {
		want, ok := idx.Members[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s was added", describeMember(name)))
		case memberDigest(members[name]) != want:
			problems = append(problems, fmt.Sprintf("%s was changed (it is %s; %s was planned)", describeMember(name), memberDigest(members[name]), want))
		}
	}
	for _, name := range sortedKeys(idx.Members) {
		if _, ok := members[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s was removed", describeMember(name)))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s was modified after it was planned (tampered with or damaged): %s. Do not apply it: run `fuscia plan -out` again and review the new plan",
			ErrIntegrity, path, strings.Join(problems, "; "))
	}
	return nil
}

// describeMember says what a member of a plan file holds.
func describeMember(name string) string {
	switch {
	case name == manifestEntry:
		return fmt.Sprintf("member %s (the plan, its variables and locks)", name)
	case strings.HasPrefix(name, "workflows/"):
		return fmt.Sprintf("member %s (a workflow source)", name)
	}
	return fmt.Sprintf("member %q", name)
}

// readMembers reads every member of a plan file, refusing duplicate names and members larger
// than maxEntrySize. The integrity entry is returned apart (nil when the file has none).
func readMembers(path string, zr *zip.Reader) (members map[string][]byte, integrity []byte, err error) {
	members = make(map[string][]byte, len(zr.File))
	var total int64
	for _, f := range zr.File {
		if _, dup := members[f.Name]; dup || (f.Name == integrityEntry && integrity != nil) {
			return nil, nil, fmt.Errorf("%w: %s holds member %s twice", ErrCorrupt, path, f.Name)
		}
		data, err := readMember(path, f)
		if err != nil {
			return nil, nil, err
		}
		if total += int64(len(data)); total > maxPlanSize {
			return nil, nil, fmt.Errorf("%w: %s inflates to more than %d MiB", ErrCorrupt, path, maxPlanSize>>20)
		}
		if f.Name == integrityEntry {
			integrity = data
			continue
		}
		members[f.Name] = data
	}
	return members, integrity, nil
}

// Rebuilt compares p, the plan built again at apply from the saved sources and what is
// installed now, with the plan saved in the file. They differ when what a node grants or
// dispatches to changed since plan without changing a locked digest (a component's manifest
// granting other hosts, for one), or when the file's plan was rewritten with its digest. The
// error wraps ErrStale and names the first node that differs. A node field added to the plan
// since the file was saved (addedNodeFields) counts as the same when the rebuilt plan has the
// value its absence meant.
func (s *Saved) Rebuilt(p *Plan) error {
	now, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode the rebuilt plan: %w", err)
	}
	var saved bytes.Buffer
	if err := json.Compact(&saved, s.planJSON); err != nil {
		return fmt.Errorf("%w: the saved plan: %v", ErrCorrupt, err)
	}
	if bytes.Equal(saved.Bytes(), now) {
		return nil
	}
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(saved.Bytes(), &a)
	_ = json.Unmarshal(now, &b)
	var an, bn map[string]json.RawMessage
	_ = json.Unmarshal(a["nodes"], &an)
	_ = json.Unmarshal(b["nodes"], &bn)
	stale := func(where string) error {
		return fmt.Errorf("%w: the plan built again from the saved workflow and what is installed now differs from the saved plan in %s; run `fuscia plan -out` again and review the new plan", ErrStale, where)
	}
	if addr, fields := firstNodeDiff(an, bn); addr != "" {
		return stale("node " + addr + " (" + fields + ")")
	}
	all := map[string]bool{}
	for k := range a {
		all[k] = true
	}
	for k := range b {
		all[k] = true
	}
	for _, k := range sortedKeys(all) {
		if k != "nodes" && !bytes.Equal(a[k], b[k]) {
			return stale("its stages, components or plugins")
		}
	}
	return nil
}

// addedNodeFields are the node fields added to the plan after saved plans of its format were
// first written, each with the JSON value that a saved node without it means: a task planned
// before pools existed runs in the default pool. Adding a field here keeps the plans saved
// before it valid, which is what lets it join the format without a new format_version.
var addedNodeFields = map[string]string{
	"pool": `"` + lang.DefaultPool + `"`,
}

// firstNodeDiff finds the first node, by address, whose plan differs between saved and now,
// and says how; addr is "" when every node is the same.
func firstNodeDiff(saved, now map[string]json.RawMessage) (addr, how string) {
	all := map[string]bool{}
	for k := range saved {
		all[k] = true
	}
	for k := range now {
		all[k] = true
	}
	for _, addr := range sortedKeys(all) {
		a, inSaved := saved[addr]
		b, inNow := now[addr]
		switch {
		case !inSaved:
			return addr, "not in the saved plan"
		case !inNow:
			return addr, "not in the workflow any more"
		case !bytes.Equal(a, b):
			var fa, fb map[string]json.RawMessage
			_ = json.Unmarshal(a, &fa)
			_ = json.Unmarshal(b, &fb)
			var fields []string
			for _, k := range sortedKeys(fb) {
				if _, had := fa[k]; !had && addedNodeFields[k] == string(fb[k]) {
					continue // saved before the field existed, with the value its absence means
				}
				if !bytes.Equal(fa[k], fb[k]) {
					fields = append(fields, k)
				}
			}
			for _, k := range sortedKeys(fa) {
				if _, ok := fb[k]; !ok {
					fields = append(fields, k)
				}
			}
			if len(fields) > 0 {
				return addr, strings.Join(fields, ", ") + " differ"
			}
		}
	}
	return "", ""
}
