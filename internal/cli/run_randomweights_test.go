package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunRandomWeights: a server whose every stream loops is bad output, unless its launch
// command serves random weights (--load-format dummy), whose output loops by nature: then the
// repetition check is off and a note says so. What the real vLLM sent with dummy weights is a
// loop of two tokens (testdata/servers/vllm-cpu/completions_stream.sse); the fake repeats too.
func TestRunRandomWeights(t *testing.T) {
	repeat := func(n, promptTokens, maxTokens int) benchtest.Fault {
		if maxTokens > 1 {
			return benchtest.FaultRepeat
		}
		return benchtest.FaultNone
	}
	tests := []struct {
		name, launch string
		wantStatus   results.Status
		wantNote     bool
	}{
		{"trained weights", "vllm serve m --port 8000", results.StatusError, false},
		{"random weights", "vllm serve m --load-format dummy --port 8000", results.StatusValid, true},
		{"no launch command", "", results.StatusError, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t, benchtest.Config{Fault: repeat})
			out := filepath.Join(t.TempDir(), "results.json")
			args := smallRun(srv.URL, out)
			if tt.launch != "" {
				args = append(args, "--launch-command", tt.launch)
			}
			_, stderr, _ := runBench(t, nil, args...)
			f, err := results.ReadFile(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			for _, c := range f.Decode {
				if c.Status != tt.wantStatus {
					t.Errorf("decode/%s/%d: %s (%s), want %s", c.ContextLabel, c.Concurrency, c.Status, c.Error, tt.wantStatus)
				}
				if tt.wantStatus == results.StatusError && !strings.Contains(c.Error, "repeating output") {
					t.Errorf("decode/%s/%d failed with %q, want the repeating-output check's error", c.ContextLabel, c.Concurrency, c.Error)
				}
			}
			hasNote := slices.ContainsFunc(f.Notes, func(n string) bool { return strings.Contains(n, "random weights") })
			if hasNote != tt.wantNote {
				t.Errorf("random-weights note %v, want %v: %q", hasNote, tt.wantNote, f.Notes)
			}
		})
	}
}
