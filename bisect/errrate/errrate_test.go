package errrate

import (
	"context"
	"os"
	"testing"
)

func TestSmall(t *testing.T) {
	s := DefaultSettings()
	s.Bisections = 20
	s.Slowdowns = []float64{0.10}
	s.Ranges = []int{16}
	rep, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	rep.WriteMarkdown(os.Stdout)
}
