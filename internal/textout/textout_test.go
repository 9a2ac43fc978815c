package textout

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// failAfter fails every write after its first n bytes.
type failAfter struct {
	b strings.Builder
	n int
}

var errFull = errors.New("full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.b.Len()+len(p) > f.n {
		return 0, errFull
	}
	return f.b.Write(p)
}

func TestErrWriterKeepsFirstError(t *testing.T) {
	f := &failAfter{n: 4}
	ew := &ErrWriter{W: f}
	fmt.Fprint(ew, "abc")
	fmt.Fprint(ew, "defg")
	fmt.Fprint(ew, "h")
	if !errors.Is(ew.Err, errFull) {
		t.Errorf("Err = %v, want %v", ew.Err, errFull)
	}
	if got := f.b.String(); got != "abc" {
		t.Errorf("written %q, want %q (nothing after the first error)", got, "abc")
	}
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 cells"}, {1, "1 cell"}, {2, "2 cells"}, {-1, "-1 cells"}} {
		if got := Plural(tc.n, "cell", "cells"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "st", 2: "nd", 3: "rd", 4: "th", 11: "th", 12: "th", 13: "th", 21: "st", 22: "nd", 101: "st", 111: "th", 0: "th"} {
		if got := Ordinal(n); got != want {
			t.Errorf("Ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}
