package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestPieces(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, world", []string{"Hello", ",", " world"}},
		{"a  b", []string{"a", " ", " b"}},
		{" leading", []string{" leading"}},
		{"x\n\ny", []string{"x", "\n", "\n", "y"}},
		{"naïve café 42", []string{"naïve", " café", " 42"}},
		{"end. ", []string{"end", ".", " "}},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		pieces(tt.in, func(p string) { got = append(got, p) })
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("pieces(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestRoundTripAndSlices(t *testing.T) {
	tk := New()
	text := strings.Repeat("The quick brown fox, run 3 jumps over the lazy dog.\nAnd then  again! ", 50)
	ids := tk.Encode(text)
	back, err := tk.Decode(ids)
	if err != nil || back != text {
		t.Fatalf("round trip failed: err %v, equal %v", err, back == text)
	}
	// A client sizes prompts by slicing token ids: every prefix must re-tokenize to its length.
	for n := 1; n < len(ids); n += 7 {
		s, _ := tk.Decode(ids[:n])
		if got := tk.Count(s); got != n {
			t.Fatalf("prefix of %d tokens re-tokenizes to %d tokens (%q)", n, got, s)
		}
	}
}

func TestDecodeUnknown(t *testing.T) {
	if _, err := New().Decode([]int{1 << 30}); err == nil {
		t.Fatal("want an error for an unknown id")
	}
}

func TestGeneratorDeterministic(t *testing.T) {
	tk := New()
	a := string(tk.NewGenerator(7).Append(nil, 50))
	b := string(tk.NewGenerator(7).Append(nil, 50))
	c := string(tk.NewGenerator(8).Append(nil, 50))
	if a != b || a == c {
		t.Fatalf("same seed must give the same text and another seed another: %q %q %q", a, b, c)
	}
	if got := tk.Count(a); got != 50 {
		t.Fatalf("50 generated tokens tokenize to %d", got)
	}
}

func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"Hello, world", "a  b", "naïve\x00\xff", " 12 34 ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tk := New()
		ids := tk.Encode(s)
		back, err := tk.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("round trip %q → %q", s, back)
		}
		if utf8.ValidString(s) {
			if got := tk.Count(back); got != len(ids) {
				t.Fatalf("re-tokenizing %q gives %d tokens, want %d", back, got, len(ids))
			}
		}
	})
}

func BenchmarkEncode1MTokens(b *testing.B) {
	tk := New()
	text := strings.Repeat("the river and the mountain, a quiet morning in the old village. ", 1<<20/13)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tk.Encode(text)
	}
}

// TestConcurrentUse encodes new words while generating text (run with -race).
func TestConcurrentUse(t *testing.T) {
	tk := New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			tk.Encode(strings.Repeat("novel", 1) + string(rune('a'+i%26)) + strings.Repeat("x", i%7))
		}
	}()
	g := tk.NewGenerator(1)
	var b []byte
	for range 2000 {
		b = g.Append(b[:0], 3)
	}
	<-done
}
