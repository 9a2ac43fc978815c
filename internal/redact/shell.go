package redact

import (
	"fmt"
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
	return w.spans, w.quotes, nil
}

type walker struct {
	src    string
	hdocs  map[*syntax.Word]bool // heredoc bodies: text, scanned only
	spans  []span
	quotes []quoted
}

func off(p syntax.Pos) int { return int(p.Offset()) }

func (w *walker) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.Comment:
		start := off(n.Hash) + 1
		w.spans = append(w.spans, scanSpans(identity(n.Text, start), true)...)
	case *syntax.Redirect:
		if n.Hdoc != nil {
			w.hdocs[n.Hdoc] = true
		}
	case *syntax.Word:
		l := w.logical(n)
		if !w.hdocs[n] {
			w.spans = append(w.spans, l.wordSpans()...)
		}
		if strings.ContainsAny(l.String(), " \t\n\r") {
			w.spans = append(w.spans, scanSpans(l, false)...)
		}
	case *syntax.CallExpr:
		for i := 0; i+1 < len(n.Args); i++ {
			if !isSecretFlag(w.logical(n.Args[i]).String()) {
				continue
			}
			w.redactWord(n.Args[i+1], true)
		}
	case *syntax.Assign:
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
