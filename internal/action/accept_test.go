package action

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot"
)

// TestAcceptRefusal: /bench accept lifts a finished ❌ or ❓ block; every other state of the
// head's check is refused with what to run instead, naming the full commit id.
func TestAcceptRefusal(t *testing.T) {
	const head = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	const old = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
	done := func(conclusion, verdict, title string) (ghbot.CheckRun, checkState) {
		return ghbot.CheckRun{Status: "completed", Conclusion: conclusion, Title: title}, checkState{Verdict: verdict}
	}
	for _, tc := range []struct {
		name  string
		cr    ghbot.CheckRun
		cs    checkState
		noRun bool
		st    State
		want  []string // "" alone: accepted
	}{
		{name: "regression", cr: runOf(done("failure", "regression", "Blocked")), cs: stateOf(done("failure", "regression", "Blocked")), want: []string{""}},
		{name: "unproven", cr: runOf(done("failure", "unproven", "Not proven")), cs: stateOf(done("failure", "unproven", "Not proven")), want: []string{""}},
		{name: "regression, fail_on_regression off", cr: runOf(done("neutral", "regression", "Not blocking")), cs: stateOf(done("neutral", "regression", "Not blocking")), want: []string{""}},
		{name: "incomplete", cr: runOf(done("failure", "incomplete", "Incomplete")), cs: stateOf(done("failure", "incomplete", "Incomplete")),
			want: []string{"missing data never passes", "`/bench rerun`", "`/bench " + head + "`"}},
		{name: "passes", cr: runOf(done("success", "unchanged", "Not blocked")), cs: stateOf(done("success", "unchanged", "Not blocked")),
			want: []string{"nothing to accept", "already passes", "No command is needed"}},
		{name: "nothing compared", cr: runOf(done("failure", "", "Blocked: nothing to compare")), cs: checkState{},
			want: []string{"nothing was compared at `" + head + "`", "`/bench " + head + "`"}},
		{name: "measuring", cr: ghbot.CheckRun{Status: "in_progress"}, want: []string{"is being measured now", "`/bench accept " + head + " <reason>`"}},
		{name: "cancelled", cr: runOf(done("cancelled", "", "Stopped")), want: []string{"did not end in results", "`/bench " + head + "`"}},
		{name: "no check", noRun: true, want: []string{"no results at the head `" + head + "`", "`/bench " + head + "`"}},
		{name: "earlier head", noRun: true, st: State{Phase: phaseDone, HeadSHA: old},
			want: []string{"the last results are for `" + old + "`, but the head is now `" + head + "`", "`/bench " + head + "`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := acceptRefusal(head, tc.cr, !tc.noRun, tc.cs, tc.st, tc.st.Phase != "")
			if len(tc.want) == 1 && tc.want[0] == "" {
				if got != "" {
					t.Errorf("refused: %s", got)
				}
				return
			}
			if got == "" {
				t.Fatal("accepted, want a refusal")
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the refusal lacks %q: %s", w, got)
				}
			}
			if strings.Contains(got, "`"+head[:7]+"`") {
				t.Errorf("the refusal names a short id: %s", got)
			}
		})
	}
}

// runOf and stateOf pick the check run and its state out of done.
func runOf(cr ghbot.CheckRun, _ checkState) ghbot.CheckRun { return cr }
func stateOf(_ ghbot.CheckRun, cs checkState) checkState   { return cs }
