package prompt

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/bench/server"
)

// toyTokenizer is a deterministic tokenizer for tests: a token is a word with its leading
// space, a punctuation mark, or a run of other white space; every prompt starts with BOS (id 1).
// Chat prompts are wrapped in 3 template tokens.
type toyTokenizer struct {
	mu    sync.Mutex
	vocab map[string]int
	piece []string
	// lossy makes Detokenize drop the last token's text, as a detokenizer that holds back an
	// incomplete piece would.
	lossy bool
	// double makes every word two tokens, so that odd counts cannot be reached from whole words.
	double bool
	calls  int
	// noChat makes /tokenize refuse chat messages, as llama.cpp does.
	noChat bool
	// maxLen makes /tokenize refuse texts longer than this many tokens (0: no limit), as a
	// server that checks max_model_len would.
	maxLen int
}

const bos = 1

func newToy() *toyTokenizer {
	return &toyTokenizer{vocab: map[string]int{}, piece: []string{"<pad>", "<s>", "<user>", "</user>", "<assistant>"}}
}

func (tt *toyTokenizer) id(p string) int {
	if id, ok := tt.vocab[p]; ok {
		return id
	}
	tt.vocab[p] = len(tt.piece)
	tt.piece = append(tt.piece, p)
	return tt.vocab[p]
}

func (tt *toyTokenizer) encode(text string) []int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	ids := []int{bos}
	r := []rune(text)
	for i := 0; i < len(r); {
		j := i
		switch {
		case r[i] == ' ' && i+1 < len(r) && (unicode.IsLetter(r[i+1]) || unicode.IsDigit(r[i+1])):
			j = i + 1
			for j < len(r) && (unicode.IsLetter(r[j]) || unicode.IsDigit(r[j])) {
				j++
			}
		case unicode.IsLetter(r[i]) || unicode.IsDigit(r[i]):
			for j < len(r) && (unicode.IsLetter(r[j]) || unicode.IsDigit(r[j])) {
				j++
			}
		case unicode.IsSpace(r[i]):
			for j < len(r) && unicode.IsSpace(r[j]) && !(r[j] == ' ' && j+1 < len(r) && unicode.IsLetter(r[j+1])) {
				j++
			}
			if j == i {
				j++
			}
		default:
			j = i + 1
		}
		w := string(r[i:j])
		if tt.double && len(w) > 1 {
			ids = append(ids, tt.id(w[:1]+"\x00"), tt.id(w[1:]+"\x01"))
		} else {
			ids = append(ids, tt.id(w))
		}
		i = j
	}
	return ids
}

func (tt *toyTokenizer) decode(ids []int) string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.lossy && len(ids) > 0 {
		ids = ids[:len(ids)-1]
	}
	var b strings.Builder
	for i := 0; i < len(ids); i++ {
		p := tt.piece[ids[i]]
		if tt.double && strings.HasSuffix(p, "\x00") {
			if i+1 == len(ids) {
				break // half a word decodes to nothing
			}
			b.WriteString(p[:len(p)-1] + strings.TrimSuffix(tt.piece[ids[i+1]], "\x01"))
			i++
			continue
		}
		b.WriteString(p)
	}
	return b.String()
}

// serve does run the toy tokenizer behind vLLM's /tokenize and /detokenize.
func (tt *toyTokenizer) serve(t testing.TB) *server.Client {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /tokenize", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Prompt   *string
			Messages []struct{ Content string }
		}
		json.NewDecoder(r.Body).Decode(&in)
		tt.mu.Lock()
		tt.calls++
		tt.mu.Unlock()
		var ids []int
		switch {
		case in.Prompt != nil:
			ids = tt.encode(*in.Prompt)
		case len(in.Messages) == 1 && !tt.noChat:
			ids = append([]int{bos, 2}, tt.encode(in.Messages[0].Content)[1:]...)
			ids = append(ids, 3, 4)
		default:
			w.WriteHeader(400)
			return
		}
		if tt.maxLen > 0 && len(ids) > tt.maxLen {
			w.WriteHeader(400)
			json.NewEncoder(w).Encode(map[string]any{"object": "error", "message": "too long"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"tokens": ids, "count": len(ids), "max_model_len": 1 << 21})
	})
	mux.HandleFunc("POST /detokenize", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Tokens []int }
		json.NewDecoder(r.Body).Decode(&in)
		json.NewEncoder(w).Encode(map[string]string{"prompt": tt.decode(in.Tokens)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return server.New(srv.URL)
}

func TestExactLengths(t *testing.T) {
	targets := []struct {
		label string
		n     int
	}{{"1K", 1024}, {"8K", 8192}, {"32K", 32768}, {"128K", 131072}, {"1024K", 1 << 20}}
	for _, mode := range []string{"plain", "lossy", "chat"} {
		for _, tg := range targets {
			if tg.n > 131072 && (testing.Short() || raceEnabled || mode != "plain") {
				continue // one 1M-token prompt is enough to show the sizing is not quadratic
			}
			t.Run(mode+"/"+tg.label, func(t *testing.T) {
				tt := newToy()
				tt.lossy = mode == "lossy"
				b := &Builder{Tokenizer: tt.serve(t), Model: "m", RunID: "r42", Chat: mode == "chat"}
				p, err := b.Build(context.Background(), tg.n, tg.label)
				if err != nil {
					t.Fatal(err)
				}
				if p.Tokens != tg.n || p.Method != MethodServer || p.Note != "" {
					t.Errorf("reached %d tokens by %s (note %q), want exactly %d", p.Tokens, p.Method, p.Note, tg.n)
				}
				// Check independently of the Builder: the server's count of the text.
				ids := tt.encode(p.Text)
				want := tg.n
				if mode == "chat" {
					want -= 3 // the template's three tokens are not in a plain tokenization
				}
				if len(ids) != want {
					t.Errorf("the text tokenizes to %d tokens, want %d", len(ids), want)
				}
				if !strings.HasPrefix(p.Text, "run r42 context "+tg.label+": ") {
					t.Errorf("prompt starts %q, want the run prefix", p.Text[:40])
				}
				if tt.calls > 8 {
					t.Errorf("%d tokenize calls for one prompt", tt.calls)
				}
			})
		}
	}
}

func TestUnreachableTargetIsNoted(t *testing.T) {
	tt := newToy()
	tt.double = true
	b := &Builder{Tokenizer: tt.serve(t), Model: "m", RunID: "r1"}
	p, err := b.Build(context.Background(), 1001, "1K")
	if err != nil {
		t.Fatal(err)
	}
	if p.Tokens == 1001 {
		t.Skip("the toy tokenizer happened to reach the odd count")
	}
	if abs(p.Tokens-1001) > 2 || !strings.Contains(p.Note, "not the target 1001") {
		t.Errorf("reached %d with note %q", p.Tokens, p.Note)
	}
}

func TestRunPrefixMakesPromptsUnique(t *testing.T) {
	tt := newToy()
	cl := tt.serve(t)
	a, err1 := (&Builder{Tokenizer: cl, Model: "m", RunID: "a"}).Build(context.Background(), 2048, "2K")
	b, err2 := (&Builder{Tokenizer: cl, Model: "m", RunID: "b"}).Build(context.Background(), 2048, "2K")
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if a.Text[:20] == b.Text[:20] {
		t.Errorf("two runs share the start of their prompts: %q", a.Text[:20])
	}
}

func TestFallbackWithoutTokenize(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	calls := 0
	measure := func(_ context.Context, text string) (int, error) {
		calls++
		return len(text)/3 + 7, nil // 3 chars per token, 7 tokens of template
	}
	b := &Builder{Tokenizer: server.New(srv.URL), Model: "m", RunID: "x", Measure: measure}
	p, err := b.Build(context.Background(), 10000, "10K")
	if err != nil {
		t.Fatal(err)
	}
	if p.Method != MethodEstimate || !strings.Contains(p.Note, "no /tokenize") || !strings.Contains(p.Note, "3.00 characters per token") {
		t.Errorf("method %s note %q", p.Method, p.Note)
	}
	if got := len(p.Text)/3 + 7; abs(got-10000) > 10 {
		t.Errorf("the prompt would have %d tokens, want about 10000", got)
	}
	if _, err := b.Build(context.Background(), 20000, "20K"); err != nil || calls != 2 {
		t.Errorf("second prompt: %v; %d calibration requests in all, want 2", err, calls)
	}
	if !strings.HasPrefix(p.Text, "run x context 10K: ") {
		t.Errorf("no run prefix: %q", p.Text[:30])
	}
}

func TestFallbackUncalibrated(t *testing.T) {
	b := &Builder{RunID: "x"}
	p, err := b.Build(context.Background(), 1000, "1K")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Text); n < 3900 || n > 4000 || !strings.Contains(p.Note, "default, uncalibrated") {
		t.Errorf("%d chars, note %q", n, p.Note)
	}
	bad := &Builder{RunID: "x", Measure: func(context.Context, string) (int, error) { return 0, errors.New("refused") }}
	p, err = bad.Build(context.Background(), 1000, "1K")
	if err != nil || !strings.Contains(p.Note, "calibration failed: refused") {
		t.Errorf("note %q, %v", p.Note, err)
	}
	if _, err := b.Build(context.Background(), 0, "0"); err == nil {
		t.Error("target 0 accepted")
	}
}

func TestTextIsNaturalAndStable(t *testing.T) {
	a, b := Text(50000), Text(50000)
	if a != b || len(a) < 50000 {
		t.Fatal("Text is not deterministic or too short")
	}
	words := strings.Fields(a)
	letters := 0
	for _, w := range words {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			letters++
		}
	}
	if float64(letters)/float64(len(words)) < 0.97 {
		t.Errorf("only %d of %d words have letters", letters, len(words))
	}
	if len(corpus) > 200<<10 {
		t.Errorf("corpus is %d bytes, keep it under 200 KB", len(corpus))
	}
	// Two sections differ in order, so the text is not one block repeated.
	n := len(corpus)
	if a[:n/2] == a[n+2:n+2+n/2] {
		t.Error("the second section repeats the first verbatim")
	}
}

func BenchmarkBuild1M(b *testing.B) {
	tt := newToy()
	cl := tt.serve(b)
	for b.Loop() {
		bl := &Builder{Tokenizer: cl, Model: "m", RunID: "bench"}
		if _, err := bl.Build(context.Background(), 1<<20, "1024K"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestChatWithoutChatTokenize(t *testing.T) {
	tt := newToy()
	tt.noChat = true
	b := &Builder{Tokenizer: tt.serve(t), Model: "m", RunID: "r", Chat: true}
	p, err := b.Build(context.Background(), 4096, "4K")
	if err != nil {
		t.Fatal(err)
	}
	if p.Method != MethodServer || p.Tokens != 4096 || len(tt.encode(p.Text)) != 4096 || !strings.Contains(p.Note, "chat template") {
		t.Errorf("method %s, %d tokens, note %q: want exact plain sizing with a note", p.Method, p.Tokens, p.Note)
	}
}

func TestTargetNearMaxModelLen(t *testing.T) {
	// 1019K of a 1024K context: the text tokenized to cut from must not be far longer than the
	// target, or a server that checks max_model_len refuses it. Scaled down: 63K of 64K.
	tt := newToy()
	tt.maxLen = 64 * 1024
	b := &Builder{Tokenizer: tt.serve(t), Model: "m", RunID: "r"}
	p, err := b.Build(context.Background(), 63*1024, "63K")
	if err != nil {
		t.Fatal(err)
	}
	if p.Tokens != 63*1024 {
		t.Errorf("reached %d", p.Tokens)
	}
}

func TestCutTextIsValidUTF8(t *testing.T) {
	for n := 1; n < 30000; n += 37 {
		if s := cutText(n); !utf8.ValidString(s) || len(s) > n || len(s) < n-4 {
			t.Fatalf("cutText(%d): %d bytes, valid %v", n, len(s), utf8.ValidString(s))
		}
	}
}
