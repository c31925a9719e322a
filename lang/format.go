package lang

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns src in canonical form (hclwrite.Format), after checking it parses: a file with
// syntax errors is not formatted; the diagnostics say why.
//
// On top of hclwrite's layout, line endings become LF, trailing whitespace is removed (except
// inside heredocs, where it is part of the value) and the file ends with exactly one newline; a
// file with nothing but whitespace formats to nothing.
func Format(filename string, src []byte) ([]byte, hcl.Diagnostics) {
	// Parse the bytes as given, with the loader's file checks (size, text, nesting), so that
	// diagnostics point at the user's lines and columns and fmt refuses what validate refuses.
	_, diags := NewParser().ParseSource(filename, src)
	if diags.HasErrors() {
		return nil, diags
	}
	// hclwrite keeps CRLF endings as it finds them, so convert them first. That changes a value
	// only where a line ending is part of one, in a heredoc, whose lines then end as they would
	// in any LF file.
	out := hclwrite.Format(bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n")))
	out = trimTrailingSpace(out)
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return []byte{}, diags
	}
	return append(out, '\n'), diags
}

// trimTrailingSpace removes spaces and tabs at the end of each line. hclwrite already does so
// between tokens, but keeps them at the end of comments; heredoc lines are left alone because
// there the whitespace is part of the string.
func trimTrailingSpace(src []byte) []byte {
	protected := heredocRanges(src)
	out := make([]byte, 0, len(src))
	start := 0
	for start < len(src) {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := src[start:end]
		if !protected.contains(end) {
			line = bytes.TrimRight(line, " \t")
		}
		out = append(out, line...)
		if end < len(src) {
			out = append(out, '\n')
		}
		start = end + 1
	}
	return out
}

// byteRanges are sorted, disjoint [start, end) byte offsets.
type byteRanges [][2]int

func (r byteRanges) contains(off int) bool {
	lo, hi := 0, len(r)
	for lo < hi {
		mid := (lo + hi) / 2
		switch {
		case off < r[mid][0]:
			hi = mid
		case off >= r[mid][1]:
			lo = mid + 1
		default:
			return true
		}
	}
	return false
}

// heredocRanges returns where the literal text of heredoc templates is. src has already been
// parsed without errors, so the lexer's view of it is reliable.
func heredocRanges(src []byte) byteRanges {
	if !bytes.Contains(src, []byte("<<")) {
		return nil
	}
	tokens, _ := hclsyntax.LexConfig(src, "", hcl.InitialPos)
	var r byteRanges
	depth := 0 // heredocs nest through interpolations: <<A ${<<B …B} A
	for _, t := range tokens {
		switch t.Type {
		case hclsyntax.TokenOHeredoc:
			depth++
		case hclsyntax.TokenCHeredoc:
			depth--
		case hclsyntax.TokenStringLit:
			if depth > 0 {
				r = append(r, [2]int{t.Range.Start.Byte, t.Range.End.Byte})
			}
		}
	}
	return r
}

// diffContext is the number of unchanged lines shown around each change, as in `diff -u`.
const diffContext = 3

// UnifiedDiff returns a unified diff (---/+++ headers with the file name as "a/NAME" and "b/NAME",
// @@ hunks with 3 lines of context) between old and new; "" when equal.
//
// The output applies with `patch -p1` and `git apply`. The diff is minimal (Myers) except on
// inputs so different that finding the minimum would cost too much; it is then still correct,
// just longer.
func UnifiedDiff(name string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)

	var sb strings.Builder
	sb.WriteString("--- a/" + name + "\n")
	sb.WriteString("+++ b/" + name + "\n")
	for i := 0; i < len(ops); {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start, end := max(0, i-diffContext), i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			next := end
			for next < len(ops) && ops[next].kind == ' ' {
				next++
			}
			// Changes closer than twice the context share one hunk, or their context would overlap.
			if next < len(ops) && next-end <= 2*diffContext {
				end = next
				continue
			}
			break
		}
		stop := min(len(ops), end+diffContext)
		writeHunk(&sb, ops[start:stop], a, b)
		i = stop
	}
	return sb.String()
}

// diffOp is one line of an edit script: ' ' kept, '-' removed from old, '+' added from new. a and
// b are the positions in old and new at that point (the line itself for ' ' and '-' / ' ' and '+').
type diffOp struct {
	kind byte
	a, b int
}

func writeHunk(sb *strings.Builder, ops []diffOp, a, b [][]byte) {
	var na, nb int
	for _, op := range ops {
		if op.kind != '+' {
			na++
		}
		if op.kind != '-' {
			nb++
		}
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(ops[0].a, na), hunkRange(ops[0].b, nb))
	for _, op := range ops {
		var line []byte
		if op.kind == '+' {
			line = b[op.b]
		} else {
			line = a[op.a]
		}
		sb.WriteByte(op.kind)
		sb.Write(line)
		if !bytes.HasSuffix(line, []byte("\n")) {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a hunk's line range the way diff and patch expect: "L,N", "L" when N is 1,
// and for an empty range the line before it ("0,0" at the top of the file).
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return strconv.Itoa(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits src after each newline. A last line without one is kept as it is: a missing
// final newline is a difference of its own, which the diff shows with patch's marker.
func splitLines(src []byte) [][]byte {
	lines := make([][]byte, 0, bytes.Count(src, []byte("\n"))+1)
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\n') + 1
		if i == 0 {
			i = len(src)
		}
		lines = append(lines, src[:i:i])
		src = src[i:]
	}
	return lines
}

// diffLines returns the edit script that turns a into b, removals before additions in each change.
func diffLines(a, b [][]byte) []diffOp {
	ids := make(map[string]int, len(a))
	id := func(l []byte) int {
		v, ok := ids[string(l)]
		if !ok {
			v = len(ids)
			ids[string(l)] = v
		}
		return v
	}
	ia, ib := make([]int, len(a)), make([]int, len(b))
	for i, l := range a {
		ia[i] = id(l)
	}
	inA := make([]bool, len(ids))
	for _, v := range ia {
		inA[v] = true
	}
	inB := make([]bool, len(ids)+len(b))
	for i, l := range b {
		ib[i] = id(l)
		inB[ib[i]] = true
	}

	removed, added := make([]bool, len(a)), make([]bool, len(b))
	// A line that occurs in only one file is in no common subsequence, so it is a change whatever
	// Myers would find. Setting those aside first keeps the search small when files differ a lot
	// (the search costs the product of the sizes and the number of differences), and keeps it exact.
	var ra, rb []int // ids of the lines the search still has to place
	var pa, pb []int // their positions in a and b
	for i, v := range ia {
		if inB[v] {
			ra, pa = append(ra, v), append(pa, i)
		} else {
			removed[i] = true
		}
	}
	for i, v := range ib {
		if v < len(inA) && inA[v] {
			rb, pb = append(rb, v), append(pb, i)
		} else {
			added[i] = true
		}
	}
	m := newMyers(ra, rb)
	m.compare(0, len(ra), 0, len(rb))
	for i, r := range m.removed {
		if r {
			removed[pa[i]] = true
		}
	}
	for i, r := range m.added {
		if r {
			added[pb[i]] = true
		}
	}

	ops := make([]diffOp, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && removed[i]:
			ops = append(ops, diffOp{'-', i, j})
			i++
		case j < len(b) && added[j]:
			ops = append(ops, diffOp{'+', i, j})
			j++
		default:
			ops = append(ops, diffOp{' ', i, j})
			i++
			j++
		}
	}
	return ops
}

// myers finds a shortest edit script with the linear-space variant of Myers' O(ND) algorithm
// ("An O(ND) Difference Algorithm and Its Variations", 1986, section 4b): search from both ends
// until the searches meet, which gives a point in the middle of a shortest path, then solve the
// two halves on either side of it. Memory stays linear in the input, whatever the differences.
type myers struct {
	a, b           []int
	removed, added []bool
	vf, vr         []int // furthest x per diagonal, forward and from the end
	tooExpensive   int
}

func newMyers(a, b []int) *myers {
	n := len(a) + len(b) + 3
	m := &myers{
		a: a, b: b,
		removed: make([]bool, len(a)), added: make([]bool, len(b)),
		vf: make([]int, 2*n+1), vr: make([]int, 2*n+1),
	}
	// Past about 2*sqrt(N+M) differences (GNU diff's heuristic), and at least 1024, a minimal
	// script is not worth its cost: the search is quadratic in the differences, and files that far
	// apart read no better for a few lines less. 1024 keeps a 1 MiB worst case near a second.
	m.tooExpensive = 1
	for diags := n; diags != 0; diags >>= 2 {
		m.tooExpensive <<= 1
	}
	m.tooExpensive = max(1024, m.tooExpensive)
	return m
}

func (m *myers) compare(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && m.a[aLo] == m.b[bLo] {
		aLo, bLo = aLo+1, bLo+1
	}
	for aLo < aHi && bLo < bHi && m.a[aHi-1] == m.b[bHi-1] {
		aHi, bHi = aHi-1, bHi-1
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			m.added[j] = true
		}
		return
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			m.removed[i] = true
		}
		return
	}
	x, y, ok := m.split(aLo, aHi, bLo, bHi)
	if !ok || (x == aLo && y == bLo) || (x == aHi && y == bHi) {
		// No split that makes progress (should not happen): replacing the whole range is correct.
		for i := aLo; i < aHi; i++ {
			m.removed[i] = true
		}
		for j := bLo; j < bHi; j++ {
			m.added[j] = true
		}
		return
	}
	m.compare(aLo, x, bLo, y)
	m.compare(x, aHi, y, bHi)
}

// split returns a point (x, y) on a shortest edit path from (aLo, bLo) to (aHi, bHi), strictly
// between them; both ranges are non-empty and their first and last elements differ. Coordinates
// are relative to (aLo, bLo) inside; diagonal k holds the points with x-y = k, stored at k+off.
// The reverse search runs the forward one on the reversed sequences, so its diagonal kr is the
// forward diagonal delta-kr.
func (m *myers) split(aLo, aHi, bLo, bHi int) (int, int, bool) {
	n, mm := aHi-aLo, bHi-bLo
	delta := n - mm
	odd := delta&1 != 0
	maxD := (n + mm + 1) / 2
	off := maxD + 1
	vf, vr := m.vf[:2*off+1], m.vr[:2*off+1]
	for i := range vf {
		vf[i], vr[i] = -1, -1
	}
	vf[off+1], vr[off+1] = 0, 0
	// The search leaves the edit graph when a path runs past its right or bottom edge; the
	// diagonals beyond are not searched again (kfStart/kfEnd trim the range from each side).
	kfStart, kfEnd, krStart, krEnd := 0, 0, 0, 0
	for d := 0; d <= maxD; d++ {
		if d > m.tooExpensive {
			return m.bestForward(aLo, bLo, n, mm, d-1, off, kfStart, kfEnd)
		}
		for k := -d + kfStart; k <= d-kfEnd; k += 2 {
			var x int
			if k == -d || (k != d && vf[off+k-1] < vf[off+k+1]) {
				x = vf[off+k+1]
			} else {
				x = vf[off+k-1] + 1
			}
			y := x - k
			for x < n && y < mm && m.a[aLo+x] == m.b[bLo+y] {
				x, y = x+1, y+1
			}
			vf[off+k] = x
			switch {
			case x > n:
				kfEnd += 2
			case y > mm:
				kfStart += 2
			case odd:
				kr := delta - k
				if kr >= -off && kr <= off && vr[off+kr] != -1 && x >= n-vr[off+kr] {
					return aLo + x, bLo + y, true
				}
			}
		}
		for kr := -d + krStart; kr <= d-krEnd; kr += 2 {
			var xr int
			if kr == -d || (kr != d && vr[off+kr-1] < vr[off+kr+1]) {
				xr = vr[off+kr+1]
			} else {
				xr = vr[off+kr-1] + 1
			}
			yr := xr - kr
			for xr < n && yr < mm && m.a[aHi-1-xr] == m.b[bHi-1-yr] {
				xr, yr = xr+1, yr+1
			}
			vr[off+kr] = xr
			switch {
			case xr > n:
				krEnd += 2
			case yr > mm:
				krStart += 2
			case !odd:
				k := delta - kr
				if k >= -off && k <= off && vf[off+k] != -1 {
					x := vf[off+k]
					if x >= n-xr {
						return aLo + x, bLo + x - k, true
					}
				}
			}
		}
	}
	return 0, 0, false
}

// bestForward gives up on a minimal script: it returns the furthest point that the forward
// search reached in d steps, which lies on some (not necessarily shortest) path, and short of the
// end, or the search would have met the reverse one.
func (m *myers) bestForward(aLo, bLo, n, mm, d, off, kStart, kEnd int) (int, int, bool) {
	bx, by, found := 0, 0, false
	for k := -d + kStart; k <= d-kEnd; k += 2 {
		x := m.vf[off+k]
		y := x - k
		if x < 0 || x > n || y < 0 || y > mm || (x == n && y == mm) {
			continue
		}
		if !found || x+y > bx+by {
			bx, by, found = x, y, true
		}
	}
	return aLo + bx, bLo + by, found
}
