package redact

import (
	"strings"
	"testing"
)

// TestLineWriter: a secret split over writes is redacted; the rest waits for a newline or
// Flush.
func TestLineWriter(t *testing.T) {
	var b strings.Builder
	w := NewLineWriter(&b, "sk-split-s3cret")
	for _, chunk := range []string{"key sk-spl", "it-s3cret ok\nlast sk-split", "-s3cret"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := b.String(), "key "+Marker+" ok\n"; got != want {
		t.Errorf("before Flush: %q, want %q", got, want)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "key "+Marker+" ok\nlast "+Marker; got != want {
		t.Errorf("after Flush: %q, want %q", got, want)
	}
}
