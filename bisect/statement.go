package bisect

import (
	"fmt"
	"strings"
)

// statement says in sentences what r found; every sentence holds whatever the verdicts were.
func statement(r *Result) string {
	var out []string
	if r.NotReproduced {
		switch r.BadVerdict {
		case Skip:
			out = append(out, fmt.Sprintf("The bad commit %s did not build or serve, so its slowdown could not be measured: nothing was bisected.", short(r.Bad)))
		case Undecided:
			out = append(out, fmt.Sprintf("The bad commit %s could not be shown slower or not slower than the good commit %s on the named cells after every rerun: nothing was bisected.", short(r.Bad), short(r.Good)))
		default:
			out = append(out, fmt.Sprintf("The bad commit %s did not measure slower than the good commit %s on the named cells, so there is nothing to bisect: no regression was reproduced.", short(r.Bad), short(r.Good)))
		}
	}
	for k, g := range r.Regressions {
		which := "The"
		if len(r.Regressions) > 1 {
			which = []string{"The first", "A second", "A third", "A further"}[min(k, 3)]
		}
		switch {
		case g.Culprit != "":
			s := fmt.Sprintf("%s regression's culprit is %s, the first bad commit after %s", which, short(g.Culprit), short(g.After))
			if g.Change != nil {
				s += fmt.Sprintf(" (%s, 95 %% interval %s to %s, against %s", pct(g.Change.Change), pct(g.Change.Low), pct(g.Change.High), short(g.Base))
				if k > 0 && g.Step != nil {
					s += fmt.Sprintf("; %s of it after the previous culprit", pct(g.Step.Change))
				}
				s += ")"
			}
			out = append(out, s+".")
		default:
			s := fmt.Sprintf("%s regression lies in the %d commits %s..%s (after %s)", which, len(g.Range), short(g.Range[0]), short(g.Range[len(g.Range)-1]), short(g.After))
			var why []string
			if len(g.Skipped) > 0 {
				why = append(why, fmt.Sprintf("%s did not build or serve", list(g.Skipped)))
			}
			if len(g.Unmeasurable) > 0 {
				why = append(why, fmt.Sprintf("%s stayed undecided after every rerun", list(g.Unmeasurable)))
			}
			if g.Budget {
				why = append(why, "the budget was spent")
			}
			if len(why) > 0 {
				s += ": " + strings.Join(why, "; ")
			}
			out = append(out, s+"; it cannot be narrowed to one commit.")
		}
	}
	if r.SecondRemains && r.Rest != nil {
		out = append(out, fmt.Sprintf("A second regression remains after it: the culprit explains less than the whole range's change (%s), leaving %s unexplained, and the budget ended before it was bisected.", pct(r.Total.Change), pct(r.Rest.Change)))
	}
	out = append(out, fmt.Sprintf("%d steps, %s of GPU time.", r.Steps, r.GPUTime.Round(1e9)))
	return strings.Join(out, " ")
}

// list joins short commit ids.
func list(cs []string) string {
	var s []string
	for _, c := range cs {
		s = append(s, short(c))
	}
	return strings.Join(s, ", ")
}
