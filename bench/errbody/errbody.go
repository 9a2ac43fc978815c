// Package errbody turns the body of a server's error answer into one line for an error
// message: the message of an OpenAI-style (or FastAPI) JSON error, the title of an HTML page,
// else the first line of the text. The bodies are outside input (any server a user points
// speedmatrix at, a proxy's error page); Message must accept any bytes and never return more
// than one line of MaxLen runes. It does no I/O.
package errbody

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// MaxLen is the most runes Message returns, an ellipsis marking a cut beyond it.
const MaxLen = 200

// maxDepth bounds how deep Message follows nested "error" and "detail" values.
const maxDepth = 8

// Message does return one line (no line break or other control character, valid UTF-8, at
// most MaxLen runes and "…") saying what body, an error answer's body, says: for JSON, a
// string, or an object's "message", "error" (a string or such an object), "detail" (vLLM's
// and FastAPI's: a string, such an object, or a list whose first item's "msg" is taken) or
// "msg"; for an HTML page, its <title>, else its first line of text; else the first non-empty
// line. It returns "" for a body of white space alone.
func Message(body []byte) string {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return ""
	}
	if b[0] == '{' || b[0] == '[' || b[0] == '"' {
		if m, ok := jsonMessage(b, 0); ok && strings.TrimSpace(m) != "" {
			return oneLine(m)
		}
	}
	if isHTML(b) {
		if t := htmlTitle(b); t != "" {
			return t
		}
		if l := firstLine(stripTags(b)); l != "" {
			return l
		}
	}
	return firstLine(string(b))
}

// jsonMessage does return the message of raw, a JSON value, when it has one.
func jsonMessage(raw []byte, depth int) (string, bool) {
	if depth > maxDepth {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, s != ""
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		if len(list) == 0 {
			return "", false
		}
		return jsonMessage(list[0], depth+1)
	}
	var o struct {
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Msg     json.RawMessage `json:"msg"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return "", false
	}
	for _, v := range []json.RawMessage{o.Message, o.Error, o.Detail, o.Msg} {
		if len(v) == 0 || bytes.Equal(v, []byte("null")) {
			continue
		}
		if m, ok := jsonMessage(v, depth+1); ok {
			return m, true
		}
	}
	return "", false
}

// isHTML does report whether b, trimmed, looks like an HTML page or fragment.
func isHTML(b []byte) bool {
	if b[0] != '<' {
		return false
	}
	head := string(asciiLower(b[:min(len(b), 512)]))
	for _, tag := range []string{"<!doctype html", "<html", "<head", "<title", "<body", "<h1", "<p>", "<center>"} {
		if strings.Contains(head, tag) {
			return true
		}
	}
	return false
}

// htmlTitle does return the text of b's first <title> element, as one line ("" without one),
// as golang.org/x/net/html's tokenizer reads the page (entities unescaped, a title's text raw).
func htmlTitle(b []byte) string {
	z := html.NewTokenizer(bytes.NewReader(b))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) != "title" {
				continue
			}
			var t strings.Builder
			for z.Next() == html.TextToken {
				t.Write(z.Text())
			}
			return oneLine(t.String())
		}
	}
}

// stripTags does return b's text without its tags, comments, scripts and styles, entities
// unescaped, as the tokenizer reads it; each tag ends a line, as a browser's block would.
func stripTags(b []byte) string {
	z := html.NewTokenizer(bytes.NewReader(b))
	var sb strings.Builder
	skip := "" // inside <script> or <style>: their text is code, not words
	for {
		switch z.Next() {
		case html.ErrorToken:
			return sb.String()
		case html.TextToken:
			if skip == "" {
				sb.Write(z.Text())
			}
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) == "script" || string(name) == "style" {
				skip = string(name)
			}
			sb.WriteByte('\n')
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == skip {
				skip = ""
			}
			sb.WriteByte('\n')
		default: // comments, doctypes, self-closing tags
			sb.WriteByte('\n')
		}
	}
}

// asciiLower does return b with ASCII letters in lower case and every other byte kept, so
// that an index into it is an index into b.
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// firstLine does return s's first line that is not blank, as oneLine makes it.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if l := oneLine(line); l != "" {
			return l
		}
	}
	return ""
}

// oneLine does return s on one line: invalid UTF-8 replaced, each run of white space or
// control characters one space, trimmed, cut to MaxLen runes with "…".
func oneLine(s string) string {
	words := strings.FieldsFunc(strings.ToValidUTF8(s, "\uFFFD"), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	})
	out := strings.Join(words, " ")
	if utf8.RuneCountInString(out) <= MaxLen {
		return out
	}
	n := 0
	for i := range out {
		if n == MaxLen {
			return strings.TrimRight(out[:i], " ") + "…"
		}
		n++
	}
	return out
}
