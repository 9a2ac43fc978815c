package textout

import (
	"io"
	"strconv"
	"strings"
)

// ErrWriter is an io.Writer that keeps the first error of W: after it, writes are dropped and
// report success, so that a renderer can write on and return Err once.
type ErrWriter struct {
	W   io.Writer
	Err error
}

// Write writes p to W unless an earlier write failed.
func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return len(p), nil
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}

// Plural returns "1 one" when n is 1, else "n many".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Pick returns one when n is 1, else many: the word of a count said elsewhere ("was" or
// "were", "that cell" or "those cells").
func Pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Ordinal returns the English ordinal suffix of n: "st", "nd", "rd" or "th" (1st, 2nd, 3rd,
// 4th, 11th, 21st…).
func Ordinal(n int) string {
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

// ShellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func ShellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:+=@%", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// EditDistance returns the Levenshtein distance of a and b (insertions, deletions and
// substitutions of bytes).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
