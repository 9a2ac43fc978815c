package cli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestCompareExit: compare's exit status is the row of results.Outcomes for the comparison's
// verdict — 0 unchanged, improvement, inconclusive; 3 regression; 4 incomplete, unproven, not
// comparable (saying so on stderr) — and an unknown verdict never passes.
func TestCompareExit(t *testing.T) {
	want := map[results.Verdict]int{
		results.VerdictUnchanged: 0, results.VerdictImprovement: 0, results.VerdictInconclusive: 0,
		results.VerdictRegression: 3,
		results.VerdictIncomplete: 4, results.VerdictUnproven: 4, results.VerdictNotComparable: 4,
		"some_future_verdict": 4,
	}
	for _, o := range results.Outcomes {
		if _, ok := want[o.Verdict]; !ok {
			t.Errorf("verdict %s of results.Outcomes has no expected exit status here", o.Verdict)
		}
	}
	for v, code := range want {
		var stderr bytes.Buffer
		env := &Env{Log: slog.New(slog.NewTextHandler(&stderr, nil))}
		err := cmdutil.CompareExit(env, &results.Comparison{Verdict: v})
		if got := ExitCode(err); got != code {
			t.Errorf("verdict %s: exit %d, want %d", v, got, code)
		}
		if err != nil && !Quiet(err) {
			t.Errorf("verdict %s: %v is not quiet: main would print it over the written report", v, err)
		}
		if code == 4 && !strings.Contains(stderr.String(), "cannot pass") {
			t.Errorf("verdict %s: stderr %q does not say why the head cannot pass", v, stderr.String())
		}
	}
}
