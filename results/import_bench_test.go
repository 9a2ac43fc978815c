package results_test

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// BenchmarkImportReference measures importing the reference report (73 cells).
func BenchmarkImportReference(b *testing.B) {
	ref := readRef(b)
	for b.Loop() {
		if _, err := results.Import(strings.NewReader(ref), "ref"); err != nil {
			b.Fatal(err)
		}
	}
}
