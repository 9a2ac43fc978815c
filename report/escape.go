package report

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// zwsp is the zero-width space that follows "@" and "#" in escaped text, so that GitHub links
// no mention and no issue reference (its filters run on the rendered text, after markdown's
// backslash escapes are gone).
const zwsp = "\u200b"

// EscapeText makes text that someone other than speedmatrix wrote (a PR title, a branch name,
// the reason of /bench accept) safe to show inline in markdown: one line of at most max
// characters (an ellipsis marks a cut; 0 means no limit), control and bidirectional-override
// characters dropped or made spaces, every ASCII punctuation character backslash-escaped (so it
// cannot open emphasis, code, a link, an autolink, a heading, a list, a quote, a table cell,
// an entity or HTML), and "@" and "#" followed by a zero-width space (no mention, no issue
// reference).
func EscapeText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var clean strings.Builder
	for _, r := range s {
		switch {
		case r == '\u200b':
			continue
		case bidiControl(r):
			continue
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Zs, r):
			clean.WriteByte(' ')
		default:
			clean.WriteRune(r)
		}
	}
	t := strings.Join(strings.Fields(clean.String()), " ")
	if max > 0 && utf8.RuneCountInString(t) > max {
		t = string([]rune(t)[:max-1]) + "…"
	}
	var b strings.Builder
	for _, r := range t {
		switch {
		case r == '@' || r == '#':
			b.WriteByte('\\')
			b.WriteRune(r)
			b.WriteString(zwsp)
		case r < utf8.RuneSelf && unicode.IsPunct(r) || r < utf8.RuneSelf && unicode.IsSymbol(r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// bidiControl reports whether r is a bidirectional embedding, override or isolate, which can
// make text display in another order than it reads.
func bidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

var (
	shaRE  = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
	repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	// loginRE is a GitHub login, or an App's "<slug>[bot]".
	loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`)
)

// safeURL returns u as a link destination that cannot leave a markdown link or a table cell:
// an absolute http(s) URL with parentheses, angle brackets, pipes, backslashes and spaces
// percent-encoded; ok is false for anything else.
func safeURL(u string) (string, bool) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil {
		return "", false
	}
	s := p.String()
	r := strings.NewReplacer("(", "%28", ")", "%29", "<", "%3C", ">", "%3E", "|", "%7C", `\`, "%5C", " ", "%20", "`", "%60", `"`, "%22")
	return r.Replace(s), true
}

// link returns "[text](url)" when url is safe, else text alone; text must already be markdown.
func link(text, u string) string {
	if s, ok := safeURL(u); ok {
		return "[" + text + "](" + s + ")"
	}
	return text
}

// CheckMarker returns the hidden line that marks speedmatrix's comment for one check name (the
// name query-escaped, so that it cannot close the HTML comment); ghbot.Marker, which finds the
// comment to edit, returns it.
func CheckMarker(checkName string) string {
	return "<!-- speedmatrix:comment check=" + url.QueryEscape(checkName) + " -->"
}
