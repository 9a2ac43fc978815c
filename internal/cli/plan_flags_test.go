package cli

import (
	"strings"
	"testing"
)

// TestPlanHelpListsPlanFlags: plan's help lists the flags that shape a plan, and none of run's
// own (--quiet, --compare-out, --url, -o, --budget: issue 25 counted 48 copied flags); plan still
// accepts them, so that a workflow can pass plan and run the same ones.
func TestPlanHelpListsPlanFlags(t *testing.T) {
	out, _, code := runCLI("plan", "--help")
	if code != ExitOK {
		t.Fatalf("plan --help: exit %d", code)
	}
	_, out, _ = strings.Cut(out, "\nFlags:\n")
	for _, f := range []string{"--shards", "--matrix", "--contexts", "--concurrency", "--cells", "--duration", "--trials", "--config"} {
		if !strings.Contains(out, f+" ") {
			t.Errorf("plan --help does not list %s", f)
		}
	}
	for _, f := range []string{"--quiet", "--compare-out", "--url", "--output", "--budget", "--baseline", "--sim-speedup", "--shard "} {
		if strings.Contains(out, f) {
			t.Errorf("plan --help lists run's %s, which changes no plan", f)
		}
	}
	if _, errOut, code := runCLI("plan", "--shards", "2", "--matrix", "quick", "--quiet", "--url", "http://127.0.0.1:1", "-o", "x.json"); code != ExitOK {
		t.Errorf("plan with run's flags: exit %d, want 0 (accepted and ignored)\n%s", code, errOut)
	}
}
