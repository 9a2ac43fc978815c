package cli

import (
	"strings"
	"testing"
)

// TestCalibrateBudgetFlags runs `calibrate --budget` on a few comparisons and checks that it
// prints both procedures in one table, and that a wrong --spec-noise or a negative budget is a
// usage error.
func TestCalibrateBudgetFlags(t *testing.T) {
	out, stderr, err := runBench(t, nil, "calibrate", "--budget", "30m", "--spec-noise", "off", "--history", "2", "--aa", "2", "--ab", "2", "--naive-trials", "2", "--compare", "prior-decode-rate=1=20,2=24,4=9,*=1")
	if err != nil {
		t.Fatalf("calibrate --budget: %v\n%s", err, stderr)
	}
	for _, want := range []string{"budgeted (30m0s)", "naive (2 trials a side)", "no speculative decoding", "2 earlier base runs", "1=20,2=24,4=9,*=1", "GPU time per comparison, mean / worst"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, stderr, err = runBench(t, nil, "calibrate", "--budget", "20m", "--stored-baseline", "--aa", "1", "--ab", "1")
	if err != nil || !strings.Contains(out, "the head alone") {
		t.Errorf("calibrate --budget --stored-baseline: %v\n%s%s", err, stderr, out)
	}
	for _, args := range [][]string{
		{"calibrate", "--budget", "45m", "--spec-noise", "maybe"},
		{"calibrate", "--budget", "-1m"},
		{"calibrate", "--budget", "45m", "--compare", "prior-decode-rate=1=20"},
		{"calibrate", "--budget", "45m", "--naive-trials", "-1"},
	} {
		if _, _, err := runBench(t, nil, args...); ExitCode(err) != ExitUsage {
			t.Errorf("%v: error %v, want a usage error", args, err)
		}
	}
}
