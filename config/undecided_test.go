package config

import "testing"

// TestUndecided: github.undecided defaults to failure (an unproven slowdown does not pass a
// required check) and takes failure, neutral or success; the schema agrees (TestSchema…).
func TestUndecided(t *testing.T) {
	if got := Default().GitHub.Undecided; got != UndecidedFailure {
		t.Errorf("default github.undecided = %q, want %q", got, UndecidedFailure)
	}
	for _, v := range []string{UndecidedFailure, UndecidedNeutral, UndecidedSuccess} {
		c := Default()
		if err := Parse("f", []byte("github: {undecided: "+v+"}\n"), &c); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil || c.GitHub.Undecided != v {
			t.Errorf("github.undecided: %s gives %q, %v; want it accepted", v, c.GitHub.Undecided, err)
		}
	}
}
