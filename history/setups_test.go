package history

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestMixedSetupsNamesHardware checks the warning's names of setups: a GPU count is shown only
// when the file states one ("0× (GPU not stated)" read as zero GPUs), and one run is "1 run".
func TestMixedSetupsNamesHardware(t *testing.T) {
	file := func(model, gpu string, count int) *results.File {
		f := &results.File{}
		f.Run.ServedModel = model
		f.Hardware.GPU, f.Hardware.GPUCount = gpu, count
		return f
	}
	tests := []struct {
		name  string
		files []*results.File
		want  []string
	}{
		{"one setup", []*results.File{file("m", "H200", 2), file("m", "H200", 2)}, nil},
		{"stated", []*results.File{file("m", "H200", 2), file("m", "H100", 8)},
			[]string{"the history mixes setups whose results are not comparable: m on 2× H200 (1 run); m on 8× H100 (1 run); pass one setup's results only"}},
		{"not stated", []*results.File{file("a", "", 0), file("", "H200", 0)},
			[]string{"the history mixes setups whose results are not comparable: a on (GPU not stated) (1 run); (model not stated) on H200 (1 run); pass one setup's results only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mixedSetups(tt.files)); diff != "" {
				t.Errorf("mixedSetups (-want +got):\n%s", diff)
			}
		})
	}
}
