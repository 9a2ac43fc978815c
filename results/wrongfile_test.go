package results_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

const bom = "\xef\xbb\xbf"

// TestDecodeAcceptsBOM checks that a results or comparison file saved with a UTF-8 byte order
// mark (as some Windows editors do) reads like the same file without it, and so does a report.
func TestDecodeAcceptsBOM(t *testing.T) {
	data, err := results.Encode(measured())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Decode(append([]byte(bom), data...)); err != nil {
		t.Errorf("results file with a BOM: %v", err)
	}
	cdata, err := results.EncodeComparison(sampleComparison(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.DecodeComparison(append([]byte(bom), cdata...)); err != nil {
		t.Errorf("comparison file with a BOM: %v", err)
	}
	if _, err := results.Import(strings.NewReader(bom+readRef(t)), "bom.txt"); err != nil {
		t.Errorf("report with a BOM: %v", err)
	}
}

// TestDecodeWrongDocument checks that a document of the wrong shape or kind says what it is and
// what the file should be, instead of naming a Go type or an unknown field.
func TestDecodeWrongDocument(t *testing.T) {
	rdata, err := results.Encode(measured())
	if err != nil {
		t.Fatal(err)
	}
	cdata, err := results.EncodeComparison(sampleComparison(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		data       string
		comparison bool // decode as a comparison file
		want       string
		kind       string // the WrongFileError's Got, if one is wanted
	}{
		{"array", "[]", false, `holds a JSON array; a results file is one JSON object, {"schema": "speedmatrix/results/v1", …}`, ""},
		{"array of results", "[" + string(rdata) + "]", false, "holds a JSON array; a results file is one JSON object", ""},
		{"string", `"results.json"`, false, "holds a JSON string; a results file is one JSON object", ""},
		{"comparison as results", string(cdata), false, "a comparison file (schema speedmatrix/comparison/v1), not a results file", "comparison"},
		{"results as comparison", string(rdata), true, "a results file (schema speedmatrix/results/v1), not a comparison file", "results"},
		{"array as comparison", "[1]", true, `holds a JSON array; a comparison file is one JSON object, {"schema": "speedmatrix/comparison/v1", …}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.comparison {
				_, err = results.DecodeComparison([]byte(tt.data))
			} else {
				_, err = results.Decode([]byte(tt.data))
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "results.File") || strings.Contains(err.Error(), "unknown field") {
				t.Errorf("the error names Go internals: %v", err)
			}
			var wf *results.WrongFileError
			if got := errors.As(err, &wf); got != (tt.kind != "") || (got && wf.Got != tt.kind) {
				t.Errorf("WrongFileError %+v, want one for %q", wf, tt.kind)
			}
		})
	}
}
