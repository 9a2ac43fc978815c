package prompt

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/bench/server"
)

//go:embed corpus.txt
var corpus string

// paragraphs does return the corpus's paragraphs.
func paragraphs() []string {
	var out []string
	for _, p := range strings.Split(corpus, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Text does return at least n bytes of natural prose: the corpus's paragraphs, section after
// section, each section in its own order drawn from a fixed seed, so the text is the same in
// every run and build but does not repeat one block verbatim.
func Text(n int) string {
	paras := paragraphs()
	var b strings.Builder
	b.Grow(n + 4096)
	for s := uint64(0); b.Len() < n; s++ {
		for _, i := range rand.New(rand.NewPCG(s, 0x5eed)).Perm(len(paras)) {
			b.WriteString(paras[i])
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// cutText does return the first n bytes of Text, cut back to a rune boundary.
func cutText(n int) string {
	t := Text(n)[:n]
	for len(t) > 0 && !utf8.RuneStart(t[len(t)-1]) {
		t = t[:len(t)-1]
	}
	if len(t) > 0 && t[len(t)-1] >= utf8.RuneSelf {
		t = t[:len(t)-1] // the start of a rune whose continuation was cut
	}
	return t
}

// Tokenizer is the server's tokenizer; *server.Client implements it.
type Tokenizer interface {
	Tokenize(ctx context.Context, model, text string) (server.Tokens, error)
	Detokenize(ctx context.Context, model string, ids []int) (string, error)
}

// ChatTokenizer counts a chat request's prompt, template included; *server.Client implements it.
type ChatTokenizer interface {
	TokenizeChat(ctx context.Context, model, text string) (server.Tokens, error)
}

// Methods of sizing a prompt.
const (
	MethodServer   = "server"   // the server's /tokenize
	MethodEstimate = "estimate" // a characters-per-token ratio
)

// DefaultCharsPerToken is the ratio used for English prose when nothing better is known
// (BPE tokenizers of current models give 3.8–4.6 characters per token on such text).
const DefaultCharsPerToken = 4.0

// Prompt is one built prompt.
type Prompt struct {
	Text   string
	Label  string // e.g. "8K"
	Target int    // wanted prompt tokens
	// Tokens is the prompt's length as the server's tokenizer counts it (special tokens and, for
	// chat, the template included), or the estimate with MethodEstimate.
	Tokens int
	Method string // MethodServer or MethodEstimate
	// Note says what a reader of the results must know (an estimate, a missed target).
	Note string
}

// Builder builds prompts for one run. Set Tokenizer (normally the *server.Client) to size
// prompts exactly; without one, Measure (when set) calibrates a characters-per-token ratio with
// two small real requests, else CharsPerToken (default DefaultCharsPerToken) is used.
type Builder struct {
	Tokenizer Tokenizer
	Model     string
	RunID     string
	// Chat sizes prompts for /v1/chat/completions: counts include the chat template (measured
	// through ChatTokenizer when the Tokenizer has it, else noted as unmeasured).
	Chat bool
	// Measure sends text as a real request (max_tokens 1) and returns usage.prompt_tokens.
	Measure       func(ctx context.Context, text string) (int, error)
	CharsPerToken float64
	// MaxIterations bounds detokenize/tokenize rounds per prompt (default 12).
	MaxIterations int

	mu          sync.Mutex
	calibrated  bool
	ratio       float64 // chars per token
	fixed       int     // tokens a request adds to the text (BOS, template)
	noChatCount bool    // the server cannot count chat prompts
	why         string  // why prompts are estimated
	how         string  // how the ratio was found
}

// Prefix does return the unique run prefix of a prompt.
func (b *Builder) Prefix(label string) string {
	return fmt.Sprintf("run %s context %s: ", b.RunID, label)
}

// Build does return a prompt of target tokens labelled label. With a Tokenizer it returns an
// error when the server's tokenizer fails; a server without /tokenize (server.ErrNotSupported)
// falls back to the estimate with a Note.
func (b *Builder) Build(ctx context.Context, target int, label string) (Prompt, error) {
	if target <= 0 {
		return Prompt{}, fmt.Errorf("prompt %s: target %d tokens: want > 0", label, target)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Tokenizer != nil {
		p, err := b.buildExact(ctx, target, label)
		if !errors.Is(err, server.ErrNotSupported) {
			return p, err
		}
		b.Tokenizer = nil
		b.why = "the server has no /tokenize; "
	}
	return b.buildEstimate(ctx, target, label)
}

// count does count text as the request will: with the chat template for Chat when the server
// can (else plain, and the prompt's Note says so).
func (b *Builder) count(ctx context.Context, text string) (int, error) {
	if ct, ok := b.Tokenizer.(ChatTokenizer); ok && b.Chat && !b.noChatCount {
		t, err := ct.TokenizeChat(ctx, b.Model, text)
		if !errors.Is(err, server.ErrNotSupported) {
			return len(t.IDs), err
		}
		b.noChatCount = true
	}
	t, err := b.Tokenizer.Tokenize(ctx, b.Model, text)
	return len(t.IDs), err
}

// buildExact does size the prompt with the server's tokenizer: tokenize enough text once, strip
// the special tokens an empty prompt gets, cut the ids at target minus the fixed overhead,
// detokenize, and re-count; then move the cut by the miss until the count is exact (token
// merges at the cut can shift it by a few).
func (b *Builder) buildExact(ctx context.Context, target int, label string) (Prompt, error) {
	prefix := b.Prefix(label)
	// Size the text to tokenize close to the target (about 1 % over): a server may refuse to
	// tokenize far more than max_model_len, and 1019K is max_model_len minus a little.
	sample := prefix + cutText(16384)
	st, err := b.Tokenizer.Tokenize(ctx, b.Model, sample)
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt %s: tokenize: %w", label, err)
	}
	if len(st.IDs) == 0 {
		return Prompt{}, fmt.Errorf("prompt %s: the server's tokenizer returned no tokens for %d characters", label, len(sample))
	}
	need := target + 64
	chars := int(float64(need)*float64(len(sample))/float64(len(st.IDs))*1.01) + 64
	var full []int
	for try := 0; ; try++ {
		t, err := b.Tokenizer.Tokenize(ctx, b.Model, prefix+cutText(chars))
		if err != nil {
			return Prompt{}, fmt.Errorf("prompt %s: tokenize: %w", label, err)
		}
		if len(t.IDs) >= need {
			full = t.IDs
			break
		}
		if try == 5 || len(t.IDs) == 0 {
			return Prompt{}, fmt.Errorf("prompt %s: %d characters give only %d tokens, want %d: the tokenizer's answers make no sense", label, chars, len(t.IDs), need)
		}
		chars = int(float64(chars)*float64(need)/float64(len(t.IDs))*1.01) + 64
	}
	empty, err := b.Tokenizer.Tokenize(ctx, b.Model, "")
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt %s: tokenize the empty prompt: %w", label, err)
	}
	lead := 0
	for lead < len(empty.IDs) && lead < len(full) && empty.IDs[lead] == full[lead] {
		lead++
	}
	trail := len(empty.IDs) - lead
	if trail > 0 && !equalInts(empty.IDs[lead:], full[len(full)-trail:]) {
		trail = 0
	}
	body := full[lead : len(full)-trail]
	overhead, err := b.count(ctx, "")
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt %s: count the empty prompt: %w", label, err)
	}
	k := target - overhead
	if k < 1 {
		return Prompt{}, fmt.Errorf("prompt %s: target %d tokens is not above the %d tokens every request adds", label, target, overhead)
	}
	iters := b.MaxIterations
	if iters <= 0 {
		iters = 12
	}
	best := Prompt{Label: label, Target: target, Method: MethodServer}
	bestMiss := -1
	tried := map[int]bool{}
	for range iters {
		k = min(max(k, 1), len(body))
		if tried[k] {
			break
		}
		tried[k] = true
		text, err := b.Tokenizer.Detokenize(ctx, b.Model, body[:k])
		if err != nil {
			return Prompt{}, fmt.Errorf("prompt %s: detokenize: %w", label, err)
		}
		n, err := b.count(ctx, text)
		if err != nil {
			return Prompt{}, fmt.Errorf("prompt %s: tokenize: %w", label, err)
		}
		miss := abs(n - target)
		if bestMiss < 0 || miss < bestMiss {
			best.Text, best.Tokens, bestMiss = text, n, miss
		}
		if miss == 0 {
			break
		}
		k += target - n
	}
	// A detokenizer may add or drop a leading space (SentencePiece); the run prefix must survive.
	if !strings.HasPrefix(strings.TrimLeft(best.Text, " "), strings.TrimSpace(prefix)) {
		return Prompt{}, fmt.Errorf("prompt %s: the server's detokenized text lost the run prefix %q", label, prefix)
	}
	if bestMiss != 0 {
		best.Note = fmt.Sprintf("prompt %s: the server's tokenizer reached %d tokens, not the target %d", label, best.Tokens, target)
	}
	if _, ok := b.Tokenizer.(ChatTokenizer); b.Chat && (!ok || b.noChatCount) {
		best.Note = strings.TrimPrefix(best.Note+"; the server cannot count chat prompts, so the chat template's tokens are not included", "; ")
	}
	return best, nil
}

// buildEstimate does size the prompt by characters.
func (b *Builder) buildEstimate(ctx context.Context, target int, label string) (Prompt, error) {
	if !b.calibrated {
		b.calibrate(ctx)
		b.calibrated = true
	}
	prefix := b.Prefix(label)
	chars := int(float64(target-b.fixed)*b.ratio) - len(prefix)
	if chars < 1 {
		chars = 1
	}
	text := cutText(chars)
	if i := strings.LastIndexByte(text, ' '); i > chars/2 {
		text = text[:i]
	}
	return Prompt{
		Text: prefix + text, Label: label, Target: target, Tokens: target, Method: MethodEstimate,
		Note: fmt.Sprintf("prompt %s: %ssized by %.2f characters per token (%s); the reached prompt_tokens are the server's usage", label, b.why, b.ratio, b.how),
	}, nil
}

// calibrate does measure characters per token from two real requests of different length
// (their difference cancels the fixed tokens a request adds), falling back to CharsPerToken.
func (b *Builder) calibrate(ctx context.Context) {
	b.ratio = b.CharsPerToken
	if b.ratio <= 0 {
		b.ratio = DefaultCharsPerToken
	}
	if b.Measure == nil {
		b.how = "default, uncalibrated"
		return
	}
	prefix := fmt.Sprintf("run %s calibration: ", b.RunID)
	s1, s2 := prefix+cutText(6000), prefix+cutText(18000)
	t1, err1 := b.Measure(ctx, s1)
	t2, err2 := b.Measure(ctx, s2)
	if err := errors.Join(err1, err2); err != nil || t2 <= t1 {
		if err == nil {
			err = fmt.Errorf("prompt_tokens %d then %d for a text three times longer", t1, t2)
		}
		b.how = fmt.Sprintf("default; calibration failed: %v", err)
		return
	}
	r := float64(len(s2)-len(s1)) / float64(t2-t1)
	if r < 1 || r > 20 {
		b.how = fmt.Sprintf("default; calibration gave an implausible %.2f", r)
		return
	}
	b.ratio = r
	b.fixed = max(0, t1-int(float64(len(s1))/r+0.5))
	b.how = "measured from two requests' usage.prompt_tokens"
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
