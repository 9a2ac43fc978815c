package redact

import "strings"

// lchar is one byte of a word as the shell sees it (quotes and escapes removed), with the
// bytes of the source text it came from.
type lchar struct {
	b          byte
	start, end int  // source byte range
	quote      byte // 0, '\'' or '"': the quotes it sits in
	part       int  // id of the quoted part it sits in; -1 when unquoted
	param      bool // a simple parameter expansion ($NAME, ${NAME}), stood in for by one byte
}

// logical is a word (or a stretch of text) as the shell sees it, mapped back to the source.
type logical struct {
	chars   []lchar
	end     int  // source offset where the word ends (after any closing quote)
	parts   int  // quoted parts numbered so far
	literal bool // taken literally (identity): $NAME is text, not a placeholder
}

// placeholder stands in for an expansion or substitution in a logical string.
const placeholder = 0

// identity returns text taken literally, starting at source offset base.
func identity(s string, base int) logical {
	l := logical{chars: make([]lchar, len(s)), end: base + len(s), literal: true}
	for i := 0; i < len(s); i++ {
		l.chars[i] = lchar{b: s[i], start: base + i, end: base + i + 1, part: -1}
	}
	return l
}

func (l logical) String() string {
	b := make([]byte, len(l.chars))
	for i, c := range l.chars {
		b[i] = c.b
	}
	return string(b)
}

// cut returns the span of the source that holds logical bytes [i, j); toEnd runs it to the
// end of the word instead, closing quotes included.
func (l logical) cut(i, j int, toEnd bool) span {
	if toEnd {
		return span{l.chars[i].start, l.end}
	}
	return span{l.chars[i].start, l.chars[j-1].end}
}

// isParamValue reports whether logical bytes [i, end) are exactly one simple parameter
// expansion (in a literal text, its text: $NAME, ${NAME}, "$NAME").
func (l logical) isParamValue(i int) bool {
	if l.literal {
		return isParamRef(l.String()[i:])
	}
	return i == len(l.chars)-1 && l.chars[i].param
}

// wordSpans returns the spans of the secret values of a word by the word rules: after NAME= or
// --flag= with a secret-looking name, to the end of the word; after "Authorization:" (and its
// scheme) or another secret-looking header name, to the end of the word; a JSON member
// "hf_token": "…", its string. Empty values and values that are exactly a parameter expansion
// are kept.
func (l logical) wordSpans() []span {
	s := l.String()
	var out []span
	if k := assignValue(s); k >= 0 && k < len(s) && !l.isParamValue(k) {
		out = append(out, l.cut(k, len(s), true))
	}
	for i := 0; i < len(s); {
		k, e := headerValue(s[i:])
		if k < 0 {
			break
		}
		k += i
		switch {
		case e >= 0 && i+e > k:
			out = append(out, l.cut(k, i+e, false))
		case e < 0 && !l.isParamValue(k):
			out = append(out, l.cut(k, len(s), true))
		}
		i = k + 1
	}
	return out
}

// assignValue returns the index after the first '=' of s whose name before it is a secret's
// name (a flag's by IsSecretName, a variable's by IsSecretVar), or -1.
func assignValue(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		j := i
		for j > 0 && isNameByte(s[j-1]) {
			j--
		}
		name := s[j:i]
		if name == "" {
			continue
		}
		if strings.HasPrefix(name, "-") {
			if IsSecretName(strings.TrimLeft(name, "-")) {
				return i + 1
			}
			continue
		}
		if IsSecretVar(name) {
			return i + 1
		}
	}
	return -1
}

// schemes are the Authorization schemes kept before the marker.
var schemes = []string{"bearer", "basic", "token", "digest", "negotiate", "apikey"}

// headerValue returns the index k where the value after a secret header's colon begins
// (Authorization: Bearer X gives X's index), or -1; and for a JSON member whose value is a
// string ("hf_token": "X") the index e where that string ends, else -1.
func headerValue(s string) (k, e int) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		j := i
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		json := j > 0 && s[j-1] == '"' // a JSON member: "hf_token": "…"
		if json {
			j--
		}
		ne := j
		for j > 0 && (isNameByte(s[j-1]) && s[j-1] != '.') {
			j--
		}
		name := s[j:ne]
		lower := strings.ToLower(name)
		if name == "" || !(lower == "authorization" || lower == "proxy-authorization" || IsSecretName(name)) {
			continue
		}
		k = i + 1
		for k < len(s) && isSpace(s[k]) {
			k++
		}
		if json && k < len(s) && s[k] == '"' {
			for e = k + 1; e < len(s) && s[e] != '"'; e++ {
				if s[e] == '\\' {
					e++
				}
			}
			if e < len(s) {
				return k + 1, e
			}
		}
		for _, sc := range schemes {
			if n := len(sc); k+n < len(s) && strings.EqualFold(s[k:k+n], sc) && (s[k+n] == ' ' || s[k+n] == '\t') {
				m := k + n
				for m < len(s) && isSpace(s[m]) {
					m++
				}
				if m < len(s) {
					k = m
				}
				break
			}
		}
		if k < len(s) {
			return k, -1
		}
	}
	return -1, -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
