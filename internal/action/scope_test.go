package action

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/ghbot"
)

// TestTokenScope (issue 20, item 12): each mode asks an App for this repository only and for the
// permissions its calls need; only the modes that write the data branch get contents: write,
// only report (a bisection's next round) gets actions: write, and pages writes nothing.
func TestTokenScope(t *testing.T) {
	for mode, want := range map[string]map[string]string{
		ModeDecide:  {"metadata": "read", "pull_requests": "write", "checks": "write", "contents": "read", "issues": "write"},
		ModeReport:  {"metadata": "read", "pull_requests": "write", "checks": "write", "contents": "write", "issues": "write", "actions": "write"},
		ModeFull:    {"metadata": "read", "pull_requests": "write", "checks": "write", "contents": "write", "issues": "write"},
		ModeCleanup: {"metadata": "read", "pull_requests": "write", "checks": "write"},
		ModePages:   {"metadata": "read", "contents": "read"},
		ModeMeasure: {"metadata": "read"},
	} {
		got := tokenScope(mode, "Hello-World")
		if d := cmp.Diff(ghbot.TokenScope{Repositories: []string{"Hello-World"}, Permissions: want}, got); d != "" {
			t.Errorf("mode %s (-want +got):\n%s", mode, d)
		}
	}
}
