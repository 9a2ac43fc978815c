package redact

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Marker replaces every secret value.
const Marker = "<redacted>"

// MinKnownLen is the shortest known secret value that is searched for in the text: shorter ones
// would match inside unrelated words.
const MinKnownLen = 4

// Option adjusts a redaction.
type Option func(*options)

type options struct {
	values []string
}

// WithValues adds known secret values (e.g. the API key read from the variable named by
// api_key_env): every occurrence of each is redacted, wherever it appears. Values shorter than
// MinKnownLen bytes or only white space are ignored.
func WithValues(vals ...string) Option {
	return func(o *options) { o.values = append(o.values, vals...) }
}

func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Result is a redacted command and how it was read.
type Result struct {
	Text string
	// Parsed is true when the command parsed as shell; false when the conservative scanner
	// redacted it (see the package doc).
	Parsed bool
	// ParseErr is the shell parser's complaint when Parsed is false.
	ParseErr error
}

// Command returns the shell command or script cmd with every secret value replaced by Marker,
// all else unchanged byte for byte (see the package doc for what a secret is).
func Command(cmd string, opts ...Option) string {
	return CommandResult(cmd, opts...).Text
}

// CommandResult is Command that also says whether the shell parser or the fallback scanner ran.
func CommandResult(cmd string, opts ...Option) Result {
	o := newOptions(opts)
	if cmd == "" {
		return Result{Parsed: true}
	}
	spans, quotes, err := shellSpans(cmd)
	res := Result{Parsed: err == nil, ParseErr: err}
	if err != nil {
		spans = scanSpans(identity(cmd, 0), true)
	}
	spans = append(spans, knownSpans(cmd, o.values)...)
	res.Text = apply(cmd, spans, quotes)
	return res
}

// Text returns s with every occurrence of the known secret values replaced by Marker; values
// shorter than MinKnownLen bytes or only white space are ignored. It is for log lines and error
// messages, where no syntax can be trusted.
func Text(s string, known ...string) string {
	return apply(s, knownSpans(s, known), nil)
}

// Args returns a copy of an argument list (argv, e.g. an engine's launch command from the
// config file) with secrets replaced by Marker: the element after a secret-looking flag,
// the value part of --flag=value and NAME=value, Authorization headers, secrets inside elements
// that hold a command (bash -c "…"), and known values.
func Args(args []string, opts ...Option) []string {
	o := newOptions(opts)
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		spans := append(argSpans(args, i), knownSpans(a, o.values)...)
		out[i] = apply(a, spans, nil)
	}
	return out
}

// ArgSecrets returns the secrets Args finds in an argument list by their place, not as known
// values: the element after a secret-looking flag, the value of --flag=value and NAME=value, an
// Authorization header's credentials, secrets inside an element that holds a command. Each is
// given once, in the order found, so that a caller can redact them wherever else they appear
// (a server's log, an error).
func ArgSecrets(args []string) []string {
	var out []string
	for i, a := range args {
		spans := argSpans(args, i)
		sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
		for j := 0; j < len(spans); {
			cur := spans[j]
			for j++; j < len(spans) && spans[j].start < cur.end; j++ {
				cur.end = max(cur.end, spans[j].end)
			}
			if v := a[cur.start:cur.end]; v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// argSpans returns the spans of args[i] that hold a secret by their place (Args, ArgSecrets).
func argSpans(args []string, i int) []span {
	a := args[i]
	l := identity(a, 0)
	var spans []span
	if i > 0 && isSecretFlag(args[i-1]) && !strings.HasPrefix(a, "--") && !isParamRef(a) && a != "" {
		spans = append(spans, span{0, len(a)})
	}
	spans = append(spans, l.wordSpans()...)
	if strings.ContainsAny(a, " \t\n") {
		spans = append(spans, scanSpans(l, false)...)
	}
	return spans
}

// Env returns a copy of an environment with the value of every secret-looking variable
// (IsSecretVar: *TOKEN*, *KEY*, *SECRET*, *PASSWORD*…) replaced by Marker, except empty values
// and values that are exactly a reference ($NAME, ${NAME}), and known values replaced in the
// others.
func Env(env map[string]string, opts ...Option) map[string]string {
	o := newOptions(opts)
	if env == nil {
		return nil
	}
	out := maps.Clone(env)
	for k, v := range out {
		switch {
		case IsSecretVar(k) && v != "" && !isParamRef(v):
			out[k] = Marker
		default:
			out[k] = Text(v, o.values...)
		}
	}
	return out
}

// secretWords are the words of a name that make it a secret's name.
var secretWords = map[string]bool{
	"key": true, "apikey": true, "token": true, "secret": true, "password": true, "passwd": true,
	"credential": true, "credentials": true,
}

// IsSecretName reports whether a flag or header name names a secret: one of its words (split
// at - _ . and white space, any case) is key, apikey, token, secret, password, passwd,
// credential or credentials. So --api-key, --hf-token and X-Api-Key are secrets;
// --max-num-batched-tokens and --tokenizer are not.
func IsSecretName(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == '-' || r == '_' || r == '.' || r == ' ' || r == '\t'
	})
	for _, w := range words {
		if secretWords[w] {
			return true
		}
	}
	return false
}

// IsSecretVar reports whether an environment variable's name names a secret: it holds TOKEN,
// KEY, SECRET, PASSWORD, PASSWD or CREDENTIAL anywhere, in any case, or IsSecretName holds.
func IsSecretVar(name string) bool {
	u := strings.ToUpper(name)
	for _, s := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(u, s) {
			return true
		}
	}
	return IsSecretName(name)
}

// isSecretFlag reports whether s is a flag without a value (--api-key, -api_key) whose name is
// secret-looking.
func isSecretFlag(s string) bool {
	if !strings.HasPrefix(s, "-") || strings.Contains(s, "=") {
		return false
	}
	name := strings.TrimLeft(s, "-")
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return IsSecretName(name)
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// paramRef matches a value that is exactly one parameter expansion, quoted or not.
var paramRef = regexp.MustCompile(`^(\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\}|"\$[A-Za-z_][A-Za-z0-9_]*"|"\$\{[A-Za-z_][A-Za-z0-9_]*\}")$`)

// isParamRef reports whether s (raw text) is exactly $NAME or ${NAME}, possibly in double quotes.
func isParamRef(s string) bool { return paramRef.MatchString(s) }

// span is a byte range [start, end) of the text to replace by Marker.
type span struct{ start, end int }

// knownSpans returns a span for every occurrence of each usable known value in s.
func knownSpans(s string, known []string) []span {
	var out []span
	for _, v := range known {
		for _, w := range []string{v, strings.TrimSpace(v)} {
			if len(w) < MinKnownLen || strings.TrimSpace(w) == "" {
				continue
			}
			for i := 0; ; {
				j := strings.Index(s[i:], w)
				if j < 0 {
					break
				}
				out = append(out, span{i + j, i + j + len(w)})
				i += j + 1
			}
		}
	}
	return out
}

// apply replaces the spans in s by Marker, merging those that overlap. A span that removes
// the closing quote of the quoted string it starts in gets that quote back after the marker,
// and one that removes the opening quote of the quoted string it ends in gets that opening
// quote back, so valid shell stays valid.
func apply(s string, spans []span, quotes []quoted) string {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var b strings.Builder
	at := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		cur.start = max(cur.start, at)
		if cur.end <= cur.start {
			continue
		}
		b.WriteString(s[at:cur.start])
		b.WriteString(Marker)
		b.WriteString(requote(quotes, cur))
		at = cur.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// quoted is a quoted string of the source: its opening quote at open, its content [cstart, cend),
// its closing quote at cend.
type quoted struct {
	open, cstart, cend int
	opener, closer     string
}

// requote returns the quotes that replacing sp must put back after the marker.
func requote(quotes []quoted, sp span) string {
	var in, reopen *quoted
	for i := range quotes {
		q := &quotes[i]
		if q.cstart <= sp.start && sp.start <= q.cend && (in == nil || q.cstart > in.cstart) {
			in = q
		}
		if sp.start <= q.open && q.cstart <= sp.end && sp.end <= q.cend && (reopen == nil || q.cstart > reopen.cstart) {
			reopen = q
		}
	}
	out := ""
	if in != nil && sp.end > in.cend {
		out += in.closer
	}
	if reopen != nil {
		out += reopen.opener
	}
	return out
}
