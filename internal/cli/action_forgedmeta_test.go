package cli

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestActionReportForgedMeta (issue 34, item 2): the report job takes the run's kind from the
// event and its cells from the decide job's cells output (the cells input), never from the
// artifact's meta.json. The same 40 %-slower head fails the check with the honest meta.json;
// a meta.json that names a cell nobody measured (so that nothing would be compared) or
// another kind is refused, a failure that says why; before, the forged cell made the check
// neutral ("Nothing compared, nothing blocked"), which satisfies a required check.
func TestActionReportForgedMeta(t *testing.T) {
	for _, tc := range []struct {
		name, meta, cells, verdict, summary string
	}{
		{name: "honest", meta: prMeta("2")},
		{name: "forged cell", meta: strings.Replace(prMeta("2"), `"kind"`, `"cells":["decode/2K/3"],"kind"`, 1),
			verdict: "refused", summary: "cells decode/2K/3"},
		{name: "forged kind", meta: strings.Replace(prMeta("2"), `"kind":"pull_request"`, `"kind":"command","cells":["decode/2K/3"]`, 1),
			verdict: "refused", summary: "kind command"},
		{name: "decided cells missing from the artifact", meta: prMeta("2"), cells: "decode/8K/8",
			verdict: "refused", summary: "decode/8K/8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStoreEnv(t, 0)
			e.put(prBase)
			reportPR(e.actEnv)
			if tc.cells != "" {
				e.vars["INPUT_CELLS"] = tc.cells
			}
			writeArtifact(t, e.actEnv, tc.meta, map[string]*results.File{"results.json": scaled(t, 0.6)})
			out, _, _ := e.run(t.Context())
			if (tc.verdict != "" && out["verdict"] != tc.verdict) || out["conclusion"] != "failure" {
				t.Errorf("outputs %v, want verdict %s and conclusion failure", out, tc.verdict)
			}
			c := oneCheck(t, e.srv.State(), prHead)
			if c.Conclusion != "failure" || !strings.Contains(c.Summary, tc.summary) {
				t.Errorf("check %s %q:\n%s", c.Conclusion, c.Title, c.Summary)
			}
		})
	}
}
