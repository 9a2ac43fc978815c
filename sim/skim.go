package sim

import (
	"bytes"
	"unicode/utf8"
)

// skimPrompt finds the top-level "prompt" member of a JSON object whose value is a string
// without escapes, and returns that string's bytes and the body with the value replaced by "",
// so that a 1M-token prompt (5 MB) is not scanned by encoding/json on every request. ok is
// false when the body has no such member or is not a well-formed object as far as the skim
// can tell; the caller then decodes the whole body, which also reports any error.
func skimPrompt(body []byte) (prompt, rest []byte, ok bool) {
	i := skipWS(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, nil, false
	}
	i++
	for {
		i = skipWS(body, i)
		if i >= len(body) {
			return nil, nil, false
		}
		if body[i] == '}' {
			return nil, nil, false // no prompt member
		}
		if body[i] != '"' {
			return nil, nil, false
		}
		kend := stringEnd(body, i)
		if kend < 0 {
			return nil, nil, false
		}
		key := body[i+1 : kend]
		i = skipWS(body, kend+1)
		if i >= len(body) || body[i] != ':' {
			return nil, nil, false
		}
		v := skipWS(body, i+1)
		end := valueEnd(body, v)
		if end < 0 {
			return nil, nil, false
		}
		if string(key) == "prompt" && body[v] == '"' {
			s := body[v+1 : end-1]
			if bytes.IndexByte(s, '\\') >= 0 || !plainJSONString(s) {
				return nil, nil, false
			}
			rest = make([]byte, 0, len(body)-len(s))
			rest = append(append(append(rest, body[:v]...), '"', '"'), body[end:]...)
			// encoding/json takes the last of duplicate keys, matches keys without regard to
			// case and decodes escapes in them: leave any such body to it.
			if low := bytes.ToLower(rest); bytes.Count(low, []byte(`"prompt"`)) != 1 || bytes.Contains(rest, []byte(`\u`)) {
				return nil, nil, false
			}
			return s, rest, true
		}
		i = skipWS(body, end)
		if i >= len(body) {
			return nil, nil, false
		}
		switch body[i] {
		case ',':
			i++
		case '}':
			return nil, nil, false
		default:
			return nil, nil, false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that closes the string starting at b[i] == '"', or
// -1.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		j = q + 1
	}
}

// valueEnd returns the index just past the JSON value starting at b[i], or -1. It checks
// nesting and strings, not the full grammar.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		e := stringEnd(b, i)
		if e < 0 {
			return -1
		}
		return e + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := stringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// plainJSONString reports whether s may stand between quotes in JSON as it is: valid UTF-8
// without control characters (encoding/json would replace or reject them).
func plainJSONString(s []byte) bool {
	for _, c := range s {
		if c < 0x20 {
			return false
		}
	}
	return utf8.Valid(s)
}
