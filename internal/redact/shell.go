package redact

import (
	"fmt"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxParse is the longest text given to the shell parser; its positions hold offsets up to
// 2^32, and a launch command is far shorter.
const maxParse = 1 << 24

// shellSpans parses cmd as bash and returns the spans of its secret values, or the parser's
// error.
func shellSpans(cmd string) ([]span, []quoted, error) {
	if len(cmd) > maxParse {
		return nil, nil, fmt.Errorf("the command is %d bytes, longer than the parser takes", len(cmd))
	}
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).
		Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, nil, err
	}
	w := walker{src: cmd, hdocs: map[*syntax.Word]bool{}}
	syntax.Walk(f, w.visit)
	w.flagValues()
	return w.spans, w.quotes, nil
}

// item is a word, or an assignment (word nil), at [start, end) of the source.
type item struct {
	start, end int
	word       *syntax.Word
}

type walker struct {
	src    string
	hdocs  map[*syntax.Word]bool // heredoc bodies: text, scanned only
	words  []item                // every word but heredoc bodies, and every assignment
	spans  []span
	quotes []quoted
}

func off(p syntax.Pos) int { return int(p.Offset()) }

func (w *walker) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.Comment:
		// The comment's source, to the end of its line: n.Text can differ from it (NUL bytes).
		start := min(off(n.Hash)+1, len(w.src))
		end := strings.IndexByte(w.src[start:], '\n')
		if end < 0 {
			end = len(w.src) - start
		}
		w.spans = append(w.spans, scanSpans(identity(w.src[start:start+end], start), true)...)
	case *syntax.Redirect:
		if n.Hdoc != nil {
			w.hdocs[n.Hdoc] = true
		}
	case *syntax.Word:
		l := w.logical(n)
		if !w.hdocs[n] {
			w.spans = append(w.spans, l.wordSpans()...)
			w.words = append(w.words, item{off(n.Pos()), off(n.End()), n})
		}
		if strings.ContainsAny(l.String(), " \t\n\r") {
			w.spans = append(w.spans, scanSpans(l, false)...)
		}
	case *syntax.Assign:
		if !n.Naked && n.Name != nil {
			w.words = append(w.words, item{off(n.Pos()), off(n.End()), nil})
		}
		if n.Name == nil || !IsSecretVar(n.Name.Value) {
			break
		}
		if n.Value != nil && !n.Naked {
			w.redactWord(n.Value, false)
		}
		if n.Array != nil && len(n.Array.Elems) > 0 {
			w.spans = append(w.spans, span{off(n.Array.Lparen) + 1, off(n.Array.Rparen)})
		}
	case *syntax.SglQuoted:
		q := quoted{open: off(n.Left), cstart: off(n.Left) + 1, cend: off(n.Right), opener: "'", closer: "'"}
		if n.Dollar {
			q.cstart++
			q.opener = "$'"
		}
		w.quotes = append(w.quotes, q)
	case *syntax.DblQuoted:
		q := quoted{open: off(n.Left), cstart: off(n.Left) + 1, cend: off(n.Right), opener: `"`, closer: `"`}
		if n.Dollar {
			q.cstart++
			q.opener = `$"`
		}
		w.quotes = append(w.quotes, q)
	case *syntax.ParamExp:
		if n.Param != nil && IsSecretVar(n.Param.Value) && n.Exp != nil && n.Exp.Word != nil {
			w.redactWord(n.Exp.Word, false)
		}
	}
	return true
}

// flagValues redacts the word after each secret-looking flag: the next word of the text,
// whatever the syntax between them, so that a flag that ends a statement or names a
// redirection's file (< --api-key sk) still takes the word after it, as a person reading the
// command would.
func (w *walker) flagValues() {
	sort.SliceStable(w.words, func(i, j int) bool { return w.words[i].start < w.words[j].start })
	for i := 0; i+1 < len(w.words); i++ {
		it := w.words[i]
		if it.word == nil || !isSecretFlag(lastField(w.logical(it.word).String())) &&
			!isSecretFlag(strings.Trim(lastField(w.src[it.start:it.end]), `'"`)) {
			continue
		}
		for j := i + 1; j < len(w.words); j++ {
			next := w.words[j]
			if next.start < it.end {
				continue
			}
			if next.word != nil {
				w.redactWord(next.word, true)
			} else if next.end > next.start {
				w.spans = append(w.spans, span{next.start, next.end}) // --api-key A=…: an assignment
			}
			break
		}
	}
}

// lastField returns the last word of s split at white space and escaped newlines: a word
// that ends in a flag (x\ --api-key, "a --api-key") counts as that flag.
func lastField(s string) string {
	f := plainWords(s)
	if len(f) == 0 {
		return ""
	}
	return s[f[len(f)-1].s:f[len(f)-1].e]
}

// redactWord redacts a whole word (a secret flag's or variable's value) unless it is exactly a
// parameter expansion; asFlagValue skips words that are flags themselves (--port after a
// --hf-token that takes no value).
func (w *walker) redactWord(word *syntax.Word, asFlagValue bool) {
	l := w.logical(word)
	if len(l.chars) == 0 || l.isParamValue(0) {
		return
	}
	if asFlagValue && strings.HasPrefix(l.String(), "--") {
		return
	}
	w.spans = append(w.spans, l.cut(0, len(l.chars), true))
}

// logical returns a word as the shell sees it, mapped to the source.
func (w *walker) logical(word *syntax.Word) logical {
	l := logical{end: off(word.End())}
	for _, p := range word.Parts {
		w.addPart(&l, p, 0, -1)
	}
	return l
}

func (w *walker) addPart(l *logical, p syntax.WordPart, quote byte, part int) {
	switch p := p.(type) {
	case *syntax.Lit:
		w.addLit(l, off(p.Pos()), off(p.End()), quote, part)
	case *syntax.SglQuoted:
		a, b := off(p.Left)+1, off(p.Right)
		if p.Dollar {
			a++
		}
		id := l.parts
		l.parts++
		for i := a; i < b && i < len(w.src); i++ {
			l.chars = append(l.chars, lchar{b: w.src[i], start: i, end: i + 1, quote: '\'', part: id})
		}
	case *syntax.DblQuoted:
		id := part
		if quote == 0 {
			id = l.parts
			l.parts++
		}
		for _, q := range p.Parts {
			w.addPart(l, q, '"', id)
		}
	default:
		pe, ok := p.(*syntax.ParamExp)
		simple := ok && isParamRef(w.src[off(pe.Pos()):off(pe.End())])
		l.chars = append(l.chars, lchar{b: placeholder, start: off(p.Pos()), end: off(p.End()), quote: quote, part: part, param: simple})
	}
}

// addLit adds the source bytes [a, b) of a literal, removing the backslashes the shell removes
// (in double quotes only before $ ` " \ and newline) and escaped newlines.
func (w *walker) addLit(l *logical, a, b int, quote byte, part int) {
	s := w.src
	for i := a; i < b && i < len(s); {
		c := s[i]
		if c == '\\' && i+1 < b {
			n := s[i+1]
			if n == '\n' {
				i += 2
				continue
			}
			if quote == 0 || strings.IndexByte("$`\"\\", n) >= 0 {
				l.chars = append(l.chars, lchar{b: n, start: i, end: i + 2, quote: quote, part: part})
				i += 2
				continue
			}
		}
		l.chars = append(l.chars, lchar{b: c, start: i, end: i + 1, quote: quote, part: part})
		i++
	}
}
