package cli

import (
	"strings"
	"testing"
)

// TestPlanHelpListsPlanFlags: plan's help lists the flags that shape a plan, and none of run's
// own (--quiet, --compare-out, --url, -o, --budget: issue 25 counted 48 copied flags); plan
// refuses them, as any unknown flag, rather than accept a flag that changes nothing.
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
	for _, f := range [][]string{{"--quiet"}, {"--url", "http://127.0.0.1:1"}, {"-o", "x.json"}, {"--sim-speedup", "5"}, {"--budget", "1h"}} {
		if _, errOut, code := runCLI(append([]string{"plan", "--shards", "2", "--matrix", "quick"}, f...)...); code != ExitUsage || !strings.Contains(errOut, "unknown") {
			t.Errorf("plan with run's %s: exit %d, want %d (an unknown flag)\n%s", f[0], code, ExitUsage, errOut)
		}
	}
	if _, errOut, code := runCLI("plan", "--shards", "2", "--matrix", "quick", "--duration", "10s", "--trials", "2"); code != ExitOK {
		t.Errorf("plan with the flags that shape it: exit %d\n%s", code, errOut)
	}
}
