package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// maxVocab bounds the vocabulary; beyond it, unseen words are spelled one character per token.
const maxVocab = 1 << 21

// words is the generation vocabulary, common English words.
var words = strings.Fields(`the of and to in is was that for on with as by at from it this be are
or an have not which but had they were his her their one all been has would there we more when
will if who what so can about out up them some into time other than then only its over also new
after first two most may like any these could way people years many such very through our how
even back because good much well where work each those made same life still part world between
long own great day system under never while both state last however high small another during
without place large number again world power since part point case fact group early water
order open early model data light result city sound river music voice story letter garden
mountain morning evening window table market village forest island summer winter road bridge
engine paper answer question reason season signal memory moment method measure simple careful
quiet bright gentle steady rapid distant common ancient modern useful certain clear warm cold
heavy soft strong quick slow easy hard early late human local public social general special
follow carry build write read speak listen watch learn teach begin finish travel return change
grow hold bring keep leave meet move play run stand turn walk wait open close show think know`)

// Tokenizer maps text to token ids and back. It is safe for concurrent use.
type Tokenizer struct {
	mu     sync.RWMutex
	ids    map[string]int
	str    []string
	gen    []int    // ids of the generation vocabulary (" word", ",", ".")
	genStr []string // their strings, fixed at New, read without the lock
}

// New returns a tokenizer whose vocabulary starts with the generation words.
func New() *Tokenizer {
	t := &Tokenizer{ids: make(map[string]int, 4096)}
	for _, w := range words {
		t.gen = append(t.gen, t.add(" "+w))
	}
	t.gen = append(t.gen, t.add(","), t.add("."))
	for _, id := range t.gen {
		t.genStr = append(t.genStr, t.str[id])
	}
	for _, w := range words {
		t.add(w)
		t.add(" " + strings.ToUpper(w[:1]) + w[1:])
	}
	return t
}

// add returns the id of piece, adding it; the caller holds mu for writing (or is New).
func (t *Tokenizer) add(piece string) int {
	if id, ok := t.ids[piece]; ok {
		return id
	}
	id := len(t.str)
	t.ids[piece] = id
	t.str = append(t.str, piece)
	return id
}

// pieces splits text into token strings: a word (letters and digits) with the one space before
// it, or any other single character. Concatenating the pieces gives the text back.
func pieces(text string, yield func(string)) {
	// rune returns the rune at i and its size, with an ASCII fast path.
	runeAt := func(i int) (rune, int) {
		if c := text[i]; c < utf8.RuneSelf {
			return rune(c), 1
		}
		return utf8.DecodeRuneInString(text[i:])
	}
	for i := 0; i < len(text); {
		r, size := runeAt(i)
		start := i
		if r == ' ' && i+1 < len(text) {
			if r2, _ := runeAt(i + 1); isWord(r2) {
				i++
				r = r2
			}
		}
		if isWord(r) {
			for i < len(text) {
				r, size = runeAt(i)
				if r == ' ' {
					if i > start {
						break
					}
				} else if !isWord(r) {
					break
				}
				i += size
			}
		} else {
			i += size
		}
		yield(text[start:i])
	}
}

// isWord reports whether r belongs to a word: a letter or a digit.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Encode returns the token ids of text.
func (t *Tokenizer) Encode(text string) []int {
	ids := make([]int, 0, len(text)/5+1)
	var missing []int // indexes into ids of unseen pieces, whose strings follow in unseen
	var unseen []string
	t.mu.RLock()
	pieces(text, func(p string) {
		if id, ok := t.ids[p]; ok {
			ids = append(ids, id)
			return
		}
		missing = append(missing, len(ids))
		unseen = append(unseen, p)
		ids = append(ids, -1)
	})
	t.mu.RUnlock()
	if len(missing) == 0 {
		return ids
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := ids[:0:0]
	j := 0
	for i, id := range ids {
		if j < len(missing) && missing[j] == i {
			p := unseen[j]
			j++
			if _, ok := t.ids[p]; ok || len(t.str) < maxVocab {
				out = append(out, t.add(p))
				continue
			}
			// The vocabulary is full: spell the word one character at a time.
			for _, r := range p {
				out = append(out, t.add(string(r)))
			}
			continue
		}
		out = append(out, id)
	}
	return out
}

// Count returns the number of tokens of text.
func (t *Tokenizer) Count(text string) int { return len(t.Encode(text)) }

// Decode returns the text of token ids; an id the tokenizer never issued is an error.
func (t *Tokenizer) Decode(ids []int) (string, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var b strings.Builder
	for i, id := range ids {
		if id < 0 || id >= len(t.str) {
			return "", fmt.Errorf("token id %d (at index %d) is not in the vocabulary (0..%d)", id, i, len(t.str)-1)
		}
		b.WriteString(t.str[id])
	}
	return b.String(), nil
}

// Generator writes the simulated model's output: words of the generation vocabulary with a
// comma or full stop now and then, from its own seeded stream.
type Generator struct {
	t   *Tokenizer
	rng *rand.Rand
}

// NewGenerator returns a generator seeded with seed.
func (t *Tokenizer) NewGenerator(seed uint64) *Generator {
	return &Generator{t: t, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// Append appends the text of n generated tokens to b.
func (g *Generator) Append(b []byte, n int) []byte {
	nw := len(g.t.genStr) - 2
	for range n {
		var i int
		switch x := g.rng.IntN(100); {
		case x < 6:
			i = nw // ","
		case x < 10:
			i = nw + 1 // "."
		default:
			i = g.rng.IntN(nw)
		}
		b = append(b, g.t.genStr[i]...)
	}
	return b
}
