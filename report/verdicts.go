package report

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// VerdictsURL is the page whose table says what each matrix verdict concludes (docs/verdicts.md).
const VerdictsURL = "https://github.com/speedmatrix/speedmatrix/blob/main/docs/verdicts.md"

// VerdictTable returns the markdown table of results.Outcomes that docs/verdicts.md holds: for
// each matrix verdict, worst first, the exit status of `speedmatrix compare`, the check run's
// conclusion by default, the setting that changes it, whether that default passes a required
// check, and why.
func VerdictTable() string {
	var b strings.Builder
	b.WriteString("| verdict | `speedmatrix compare` exits | check conclusion by default | the setting that changes it | passes a required check? | why |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, o := range results.Outcomes {
		setting := "—"
		if o.Setting != "" {
			setting = cellText(o.Setting)
		}
		fmt.Fprintf(&b, "| `%s` | %d | `%s` | %s | %s | %s |\n", o.Verdict, o.Exit, o.Check, setting, yesNo(o.Passes), cellText(o.Why))
	}
	return b.String()
}

// VerdictRow returns the table's row for matrix verdict v as one markdown line, for the check
// run's summary: the verdict, its default conclusion and the setting that changes it, the exit
// status of `speedmatrix compare`, and why, with a link to the whole table.
func VerdictRow(v results.Verdict) string {
	o := results.OutcomeOf(v)
	s := fmt.Sprintf("**Verdict `%s`**: check `%s` by default", o.Verdict, o.Check)
	if o.Setting != "" {
		s += " (changed by " + cellText(o.Setting) + ")"
	}
	s += fmt.Sprintf(", which %s a required check; `speedmatrix compare` exits %d. Why: %s. [What each verdict concludes](%s)",
		map[bool]string{true: "passes", false: "does not pass"}[o.Passes], o.Exit, cellText(o.Why), VerdictsURL)
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// cellText is s for a markdown table cell: pipes escaped, configuration keys as code.
func cellText(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	for _, k := range []string{"github.fail_on_regression", "github.undecided", "github.no_baseline", "store.min_history", "paired.mode: auto", "/bench accept", "/bench paired"} {
		s = strings.ReplaceAll(s, k, "`"+k+"`")
	}
	return s
}
