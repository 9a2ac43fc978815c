package compare_test

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestSameRunWarns checks that comparing a run with itself (one file on both sides, two files of
// one run id, or two identical files) warns that both sides are one run, and that two different
// runs do not.
func TestSameRunWarns(t *testing.T) {
	file := func(id string, v float64) *results.File {
		f := summaryFile("m", map[int]float64{1: v, 8: 600}, nil)
		f.Run.ID = id
		return f
	}
	one := file("r1", 150)
	tests := []struct {
		name               string
		base, head         *results.File
		basePath, headPath string
		want               string
	}{
		{"one file twice", one, one, "base.json", "base.json", "base and head are the same file (base.json)"},
		{"one path spelled twice", file("", 150), file("", 151), "out/base.json", "./out/base.json", "base and head are the same file (out/base.json)"},
		{"one run id", file("r1", 150), file("r1", 140), "a.json", "b.json", "base and head are the same run (run id r1)"},
		{"identical contents", file("", 150), file("", 150), "a.json", "copy.json", "base and head hold identical results"},
		{"two runs", file("r1", 150), file("r2", 150), "a.json", "b.json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := compare.Compare(compare.Input{Base: []*results.File{tt.base}, Head: []*results.File{tt.head}, BasePath: tt.basePath, HeadPath: tt.headPath}, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(c.Warnings, "\n")
			if tt.want == "" {
				if strings.Contains(got, "base and head") {
					t.Errorf("two runs warned: %s", got)
				}
				return
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("warnings %q, want one saying %q", c.Warnings, tt.want)
			}
		})
	}
}
