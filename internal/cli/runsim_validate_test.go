package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRejectsInvalidOptionsBeforeSimulator checks that `run` without --url rejects invalid
// options as usage errors before it starts the in-process simulator (which logs that it
// measures it once started).
func TestRunRejectsInvalidOptionsBeforeSimulator(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"duration 1ns", []string{"--duration", "1ns"}, "duration"},
		{"negative duration", []string{"--duration", "-5s"}, "duration"},
		{"max tokens 0", []string{"--max-tokens", "0"}, "max"},
		{"trials 0", []string{"--trials", "0"}, "trials"},
		{"bad concurrency", []string{"--concurrency", "0"}, "concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", "--contexts", "8K", "--quiet", "-o", out}, tc.args...)
			_, stderr, err := runBench(t, nil, args...)
			if ExitCode(err) != ExitUsage {
				t.Fatalf("err %v, want a usage error (exit status %d)\n%s", err, ExitUsage, stderr)
			}
			if !strings.Contains(strings.ToLower(err.Error()), tc.want) {
				t.Errorf("err %q does not name %q", err, tc.want)
			}
			if strings.Contains(stderr, "built-in simulator") {
				t.Errorf("the simulator was started before the options were checked:\n%s", stderr)
			}
		})
	}
}
