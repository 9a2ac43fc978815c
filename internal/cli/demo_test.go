package cli

import (
	"os"
	"strings"
	"testing"
)

// TestDemoHistoryRunsUsage: --history-runs below 1 is a usage error that says what to give.
func TestDemoHistoryRunsUsage(t *testing.T) {
	_, errOut, code := runCLI("demo", "--history-runs", "0", "--dir", t.TempDir())
	if code != ExitUsage || !strings.Contains(errOut, "--history-runs 0: want 1 or more") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// TestDemoInputCheckedFirst: a head slow-down, profile or speed the simulator cannot take is a
// usage error before anything is measured (it once came after the base's ten runs): the folder
// stays empty.
func TestDemoInputCheckedFirst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--head-slowdown", "decode=1.10@ctx"}, `--head-slowdown "decode=1.10@ctx": slowdown rule`},
		{[]string{"--sim-profile", "no-such-profile"}, "--sim-profile:"},
		{[]string{"--sim-speedup", "0"}, "--sim-speedup 0: want a number above 0"},
	} {
		dir := t.TempDir()
		_, errOut, code := runCLI(append([]string{"demo", "--quiet", "--dir", dir}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("demo %v: exit %d, %q; want %d and %q", tc.args, code, errOut, ExitUsage, tc.want)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("demo %v measured before refusing: %s holds %d files", tc.args, dir, len(left))
		}
	}
}
