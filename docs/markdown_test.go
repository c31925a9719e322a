package docs

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// This file reads the parts of Markdown the link checks need, the way GitHub renders it: links
// (inline, images, reference definitions, HTML href and src), headings and the anchors GitHub
// gives them, and the prose in which a bare file name may be mentioned. Code blocks and code
// spans are not prose: nothing in them is a link.

// mdLink is a link destination as written, with the line it is on.
type mdLink struct {
	dest string
	line int
}

// mdMention is a file name ending in .md written in prose without a link.
type mdMention struct {
	name string
	line int
}

// mdDoc is what parseMarkdown finds in one file.
type mdDoc struct {
	links    []mdLink
	mentions []mdMention
	// anchors are the fragment ids of the page: one per heading (GitHub's slugs, with -1, -2
	// for repeated headings) and each explicit <a id> or <a name>.
	anchors map[string]bool
}

var (
	fenceOpen  = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextLine = regexp.MustCompile(`^ {0,3}(=+|-{3,})[ \t]*$`)
	refDef     = regexp.MustCompile(`^ {0,3}\[([^\]]+)\]:[ \t]*(<[^>]*>|\S+)`)
	// inlineDest is the destination of [text](dest "title") and ![alt](dest): up to a blank
	// or the closing parenthesis, or in <angle brackets>.
	inlineDest = regexp.MustCompile(`\]\([ \t\n]*(<[^>\n]*>|[^\s)]*)`)
	htmlDest   = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*"([^"]*)"`)
	htmlAnchor = regexp.MustCompile(`(?i)<a\s[^>]*\b(?:id|name)\s*=\s*"([^"]+)"`)
	// urlLike and wholeLink are blanked out before mentions are looked for: a URL is not a
	// mention, and a link (its text included) is checked as a link.
	urlLike   = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s)>\]]*`)
	wholeLink = regexp.MustCompile(`!?\[[^\]]*\]\([^)]*\)`)
	fileName  = regexp.MustCompile(`^(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.md$`)
	mention   = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.md)\b`)
)

// parseMarkdown finds the links, mentions and anchors of a Markdown document.
func parseMarkdown(src string) *mdDoc {
	doc := &mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{} // slug -> how many headings had it
	addHeading := func(text string) {
		s := slug(text)
		n := seen[s]
		seen[s]++
		if n > 0 {
			s += "-" + strconv.Itoa(n)
		}
		doc.anchors[s] = true
	}

	var block []string // the paragraph being read
	blockStart := 0    // its first line, 1-based
	flush := func() {
		if len(block) > 0 {
			doc.scanBlock(strings.Join(block, "\n"), blockStart)
		}
		block = nil
	}

	lines := strings.Split(src, "\n")
	fence := "" // the fence of the open code block, "" outside one
	for i, line := range lines {
		n := i + 1
		line = strings.TrimRight(line, "\r")
		if fence != "" {
			if t := strings.TrimLeft(line, " "); len(line)-len(t) <= 3 && strings.HasPrefix(t, fence) &&
				strings.Trim(t, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			flush()
			fence = m[1]
			continue
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			flush()
			addHeading(m[2])
			doc.scanBlock(m[2], n)
			continue
		}
		if setextLine.MatchString(line) && len(block) > 0 {
			text := strings.Join(block, " ")
			flush()
			addHeading(text)
			continue
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			flush()
			doc.links = append(doc.links, mdLink{dest: strings.Trim(m[2], "<>"), line: n})
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if len(block) == 0 {
			blockStart = n
		}
		block = append(block, line)
	}
	flush()
	return doc
}

// scanBlock collects the links, mentions and explicit anchors of a paragraph (or a heading's
// text) that starts on line first.
func (doc *mdDoc) scanBlock(text string, first int) {
	text, spans := blankCodeSpans(text)
	lineAt := func(off int) int { return first + strings.Count(text[:off], "\n") }
	// A code span that holds nothing but a file name names a file as much as prose does.
	for _, sp := range spans {
		if name := strings.TrimSpace(sp.text); fileName.MatchString(name) {
			doc.mentions = append(doc.mentions, mdMention{name: name, line: lineAt(sp.off)})
		}
	}
	for _, m := range inlineDest.FindAllStringSubmatchIndex(text, -1) {
		doc.links = append(doc.links, mdLink{dest: strings.Trim(text[m[2]:m[3]], "<>"), line: lineAt(m[2])})
	}
	for _, m := range htmlDest.FindAllStringSubmatchIndex(text, -1) {
		doc.links = append(doc.links, mdLink{dest: text[m[2]:m[3]], line: lineAt(m[2])})
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		doc.anchors[m[1]] = true
	}
	prose := blank(wholeLink, blank(urlLike, text))
	prose = blank(htmlDest, prose)
	for _, m := range mention.FindAllStringSubmatchIndex(prose, -1) {
		doc.mentions = append(doc.mentions, mdMention{name: prose[m[2]:m[3]], line: lineAt(m[2])})
	}
}

// blank replaces what re matches in s with spaces, keeping offsets and line breaks.
func blank(re *regexp.Regexp, s string) string {
	return re.ReplaceAllStringFunc(s, spaces)
}

func spaces(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		return ' '
	}, s)
}

// codeSpan is the text of a code span, without its delimiters, and its offset.
type codeSpan struct {
	text string
	off  int
}

// blankCodeSpans replaces every code span (`x`, “a ` b“) with spaces, delimiters included,
// keeping offsets and line breaks, and returns the spans. A backtick run without a closing run
// of the same length is literal text, as in CommonMark.
func blankCodeSpans(s string) (string, []codeSpan) {
	var spans []codeSpan
	b := []byte(s)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		run := j - i
		end := -1
		for k := j; k < len(b); {
			if b[k] != '`' {
				k++
				continue
			}
			l := k
			for l < len(b) && b[l] == '`' {
				l++
			}
			if l-k == run {
				end = l
				break
			}
			k = l
		}
		if end < 0 {
			i = j
			continue
		}
		spans = append(spans, codeSpan{text: s[j : end-run], off: i})
		for k := i; k < end; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
		i = end
	}
	return string(b), spans
}

var (
	headingLink  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	headingHTML  = regexp.MustCompile(`<[^>]+>`)
	headingEmph  = regexp.MustCompile(`\*+|(^|\s)_+|_+(\s|$)`)
	headingTicks = regexp.MustCompile("`+")
)

// slug is the anchor GitHub gives a heading: its rendered text in lower case, without
// punctuation other than '-' and '_', spaces made hyphens. (The -1, -2 of repeated headings are
// added by parseMarkdown.)
func slug(heading string) string {
	text := headingLink.ReplaceAllString(heading, "$1")
	text = headingHTML.ReplaceAllString(text, "")
	text = headingTicks.ReplaceAllString(text, "")
	text = headingEmph.ReplaceAllString(text, "$1$2")
	text = strings.ToLower(strings.TrimSpace(text))
	var b strings.Builder
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.In(r, unicode.Pc) || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
