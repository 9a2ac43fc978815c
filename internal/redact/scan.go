package redact

import "strings"

// tok is a word [s, e) of a scanned string.
type tok struct{ s, e int }

// scanSpans finds secrets in text that is not (or not known to be) shell the parser read: the
// fallback for a command that does not parse, quoted strings that hold commands, comments. It
// splits the text into words twice, once respecting quotes and once ignoring them, and applies
// the rules to both. paranoid extends every value to the end of its line.
func scanSpans(l logical, paranoid bool) []span {
	s := l.String()
	var out []span
	add := func(i, j int) {
		if paranoid {
			j = max(j, lineEnd(s, i))
		}
		if j > i {
			out = append(out, l.cut(i, j, false))
		}
	}
	for _, toks := range [][]tok{awareWords(s), plainWords(s)} {
		for k, t := range toks {
			word := s[t.s:t.e]
			if k+1 < len(toks) && isSecretFlag(strings.Trim(word, `'"`)) {
				n := toks[k+1]
				next := s[n.s:n.e]
				if !strings.HasPrefix(strings.TrimLeft(next, `'"`), "--") && !isRefWord(l, n) {
					add(n.s, n.e)
				}
			}
			if v := assignValue(word); v >= 0 && t.s+v < t.e {
				if !isRefWord(l, tok{t.s + v, t.e}) {
					add(t.s+v, t.e)
				}
			}
		}
	}
	// A header's value runs to the end of its line, whatever the quoting.
	for i := 0; i < len(s); {
		k, e := headerValue(s[i:])
		if k < 0 {
			break
		}
		k += i
		if e >= 0 {
			e += i
		} else {
			e = lineEnd(s, k)
		}
		if e > k && !isRefWord(l, tok{k, e}) {
			out = append(out, l.cut(k, e, false))
		}
		i = k + 1
	}
	return out
}

// isRefWord reports whether the word [t.s, t.e) of l is exactly a parameter expansion: one
// placeholder of a simple one, or its text ($NAME, "${NAME}").
func isRefWord(l logical, t tok) bool {
	if t.e-t.s == 1 && l.chars[t.s].param {
		return true
	}
	return isParamRef(l.String()[t.s:t.e])
}

// lineEnd returns the end of the line that holds index i, before a trailing continuation
// backslash and the white space around it.
func lineEnd(s string, i int) int {
	e := strings.IndexByte(s[i:], '\n')
	if e < 0 {
		e = len(s)
	} else {
		e += i
	}
	t := e
	for t > i && (s[t-1] == ' ' || s[t-1] == '\t' || s[t-1] == '\r') {
		t--
	}
	if t > i && s[t-1] == '\\' {
		t--
		for t > i && (s[t-1] == ' ' || s[t-1] == '\t') {
			t--
		}
		return t
	}
	return e
}

// awareWords splits s into words as a shell would quote them: white space separates words
// outside quotes, a backslash escapes the next byte (an escaped newline separates), and an
// unterminated quote runs to the end.
func awareWords(s string) []tok {
	var out []tok
	i := 0
	for i < len(s) {
		for i < len(s) && (isSpace(s[i]) || s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n') {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			break
		}
		start := i
	word:
		for i < len(s) && !isSpace(s[i]) {
			switch s[i] {
			case '\\':
				if i+1 < len(s) && s[i+1] == '\n' {
					break word
				}
				i = min(i+2, len(s))
			case '\'':
				if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
					i += j + 2
				} else {
					i = len(s)
				}
			case '"':
				i++
				for i < len(s) && s[i] != '"' {
					if s[i] == '\\' {
						i++
					}
					i++
				}
				i = min(i+1, len(s))
			default:
				i++
			}
		}
		out = append(out, tok{start, i})
	}
	return out
}

// plainWords splits s at white space and escaped newlines, ignoring quotes.
func plainWords(s string) []tok {
	var out []tok
	start := -1
	for i := 0; i <= len(s); i++ {
		sep := i == len(s) || isSpace(s[i]) || s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n'
		switch {
		case sep && start >= 0:
			out = append(out, tok{start, i})
			start = -1
		case !sep && start < 0:
			start = i
		}
	}
	return out
}
