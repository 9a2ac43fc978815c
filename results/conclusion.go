package results

// Outcome says what one matrix verdict concludes: the exit status of `speedmatrix compare`, the
// check run's conclusion by default and the setting that changes it, and why. Outcomes is the
// one table the comment, the check run and docs/verdicts.md share.
type Outcome struct {
	Verdict Verdict
	// Exit is the exit status of `speedmatrix compare` (0 passes).
	Exit int
	// Check is the check run's conclusion by default; Setting names the configuration key that
	// changes it ("" when none does).
	Check   string
	Setting string
	// Passes says whether the default conclusion lets a required check pass (success, neutral
	// and skipped do).
	Passes bool
	// Why says in one sentence why the verdict concludes so.
	Why string
}

// Exit statuses of `speedmatrix compare`.
const (
	ExitPass       = 0 // nothing worse than δ was shown or suspected
	ExitRegression = 3 // a regression was shown
	ExitUndecided  = 4 // the data cannot pass: incomplete, or a slowdown neither shown nor ruled out
)

// Outcomes is the verdict table, worst first.
var Outcomes = []Outcome{
	{VerdictRegression, ExitRegression, "failure", "github.fail_on_regression (false: neutral); /bench accept at the commit: success", false,
		"a cell, row, column or the whole matrix is worse beyond δ by a test whose noise was measured (history, separate runs, pairs), after Benjamini–Hochberg over the whole family"},
	{VerdictIncomplete, ExitUndecided, "failure", "", false,
		"the head lacks data it should hold (a cell its own plan or the base has, a partial run, a window that stalled): missing data never passes"},
	{VerdictUnproven, ExitUndecided, "failure", "github.undecided (neutral or success); /bench accept at the commit: success", false,
		"a change worse than δ that is neither shown nor ruled out: only a prior bounds its noise (a prior alone never blocks), or a row, column or the whole phase is slower beyond δ by itself but not significant among every test of the matrix (suspected), or its interval lies wholly on the slow side of δ (a shown slowdown never passes); history (store.min_history), a rerun or a paired A/B run (paired.mode: auto, /bench paired) decides it"},
	{VerdictImprovement, ExitPass, "success", "", true,
		"better beyond δ, shown as a regression would be, and nothing worse"},
	{VerdictInconclusive, ExitPass, "success", "", true,
		"complete data with nothing worse than δ shown or suspected (no cell, row, column or phase whose interval lies wholly on the slow side of δ), but some cells too noisy to show unchanged within ±δ (the comment names them and what would decide them)"},
	{VerdictUnchanged, ExitPass, "success", "", true,
		"every decided cell is shown within ±δ (two one-sided tests)"},
	{VerdictNotComparable, ExitUndecided, "neutral", "github.no_baseline (failure)", true,
		"nothing could be compared: no baseline, another setup, or no cell measured on both sides"},
}

// OutcomeOf returns the table's row for matrix verdict v (not_comparable's for an unknown one).
func OutcomeOf(v Verdict) Outcome {
	for _, o := range Outcomes {
		if o.Verdict == v {
			return o
		}
	}
	return Outcomes[len(Outcomes)-1]
}
