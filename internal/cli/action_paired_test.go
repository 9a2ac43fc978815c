package cli

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// pairedConfig is actionConfig with the store of e and paired, two blocks per side; extra is
// added to the paired section.
func pairedConfig(e *storeEnv, minHistory int, paired string) string {
	return simConfig("") + "store: {dir: " + filepath.Join(e.dir, "store") + ", min_history: " + strconv.Itoa(minHistory) + "}\n" +
		"paired: {blocks: 2" + paired + "}\n"
}

// pairedArtifacts reads the artifact's paired sides; nil, nil when the run was not paired.
func pairedArtifacts(t *testing.T, e *actEnv) (head, base *results.File) {
	t.Helper()
	hp, bp := filepath.Join(e.dir, "artifact", "paired-head.json"), filepath.Join(e.dir, "artifact", "paired-base.json")
	if !fileExistsT(hp) && !fileExistsT(bp) {
		return nil, nil
	}
	return readResults(t, hp), readResults(t, bp)
}

// wantPairedPage checks that a page (the comment, the check's summary) says the comparison is
// paired, ABBA in two blocks a side, with the base commit, why, and the GPU time of both builds.
func wantPairedPage(t *testing.T, what, page, why string) {
	t.Helper()
	for _, want := range []string{
		"**Paired A/B** (ABBA, 2 blocks per side): the base `" + prBase[:7] + "` (the merge-base) was built on this runner too",
		"Why: " + why,
		"GPU time: head ", "; base ", "; together ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("%s does not say %q:\n%s", what, want, page)
		}
	}
}

// TestActionBenchPaired: `/bench paired` by a maintainer measures the head and the merge-base
// alternately (run --paired, here two built-in simulators), compares the pairs, and the check
// (title and summary) and the comment say that the comparison is paired, ABBA in blocks, with
// the GPU time of both builds; a `/bench rerun` at the same head then reruns paired.
func TestActionBenchPaired(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.writeConfig(pairedConfig(e, 3, ""))
	e.benchComment("/bench paired")
	out := mustRun(t, e.actEnv)
	st := e.srv.State()
	cr := oneCheck(t, st, prHead)
	if cr.Status != "completed" || !strings.HasSuffix(cr.Title, "(paired A/B, ABBA)") {
		t.Errorf("check %s %q: want completed, its title saying paired A/B", cr.Status, cr.Title)
	}
	why := "`Codertocat` asked for it with `/bench paired`"
	wantPairedPage(t, "the check's summary", cr.Summary, why)
	wantPairedPage(t, "the comment", oneComment(t, st), why)
	head, base := pairedArtifacts(t, e.actEnv)
	if head == nil || head.Run.Pairing == nil || base.Run.Pairing == nil || head.Run.Pairing.ID != base.Run.Pairing.ID {
		t.Fatalf("the artifact holds no paired run")
	}
	if head.Engine.Commit != prHead || base.Engine.Commit != prBase {
		t.Errorf("commits head %s base %s, want %s and the merge-base %s", head.Engine.Commit, base.Engine.Commit, prHead, prBase)
	}
	cmp, err := results.ReadComparisonFile(out["comparison"])
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Settings.Pairing == nil || cmp.Settings.Pairing.Blocks != 2 {
		t.Errorf("comparison pairing %+v: want the pairs of 2 blocks compared", cmp.Settings.Pairing)
	}
	if g := cmp.GPUTime; g == nil || g.TotalSeconds < head.Run.GPUTime.TotalSeconds+base.Run.GPUTime.TotalSeconds-1e-9 {
		t.Errorf("comparison GPU time %+v: want both sides' together", g)
	}
	if len(replies(st)) != 0 {
		t.Errorf("replies %+v, want none", replies(st))
	}
	// While it measured, the check said the run is paired.
	measuring := false
	for _, c := range st.Calls {
		if c.Method == "POST" && strings.HasSuffix(c.Path, "/check-runs") {
			measuring = strings.Contains(c.Body, `**Paired A/B** (ABBA): the base (the merge-base) is built on this runner too`)
		}
	}
	if !measuring {
		t.Errorf("the started check did not say the run is paired")
	}

	// The comment's state remembers the paired comparison: `/bench rerun` at the same head
	// reruns paired.
	e.benchComment("/bench rerun decode/8K/8")
	mustRun(t, e.actEnv)
	wantPairedPage(t, "the rerun's comment", oneComment(t, e.srv.State()), "the last comparison at this head was paired, so `/bench rerun` reruns paired")
}

// TestActionBenchPairedReadOnly: `/bench paired` from a user who may only read measures
// nothing, starts no check, and gets a reaction, not a reply (issue 20, item 16).
func TestActionBenchPairedReadOnly(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.writeConfig(pairedConfig(e, 3, ""))
	e.srv.SetPermission(actRepo, "Codertocat", "read")
	e.benchComment("/bench paired")
	out := mustRun(t, e.actEnv)
	wantOutputs(t, out, map[string]string{"verdict": "refused", "run": "false"})
	st := e.srv.State()
	rs := replies(st)
	if len(rs) != 0 || len(st.Reactions) != 1 || st.Reactions[0].Content != "-1" {
		t.Errorf("replies %+v, reactions %+v: want a -1 reaction only", rs, st.Reactions)
	}
	if cs := checksOn(st, prHead); len(cs) != 0 {
		t.Errorf("check runs %+v, want none", cs)
	}
	if h, _ := pairedArtifacts(t, e.actEnv); h != nil {
		t.Errorf("a paired run was measured")
	}
}

// TestActionPairedAuto: with paired.mode auto, a pull request's run is paired from the start
// when the stored baseline cannot decide — an empty store, no result at the merge-base, or fewer
// stored results than store.min_history — and measured alone and compared with the stored
// baseline when the merge-base has results and the history is long enough. A first comparison
// that leaves a cell slower (or inconclusive) then measures that cell paired, and the paired
// comparison is the verdict.
func TestActionPairedAuto(t *testing.T) {
	const afterFirst = "paired.mode is auto and the comparison with the stored baseline left "
	for _, tc := range []struct {
		name   string
		setup  func(e *storeEnv)
		before bool   // paired from the start: results.json is the paired head
		why    string // the paired line's reason; "" for any rule-3 reason or none
		extra  string // added to the configuration
		// verdict, when set, is the stored baseline's comparison's, with no paired run.
		verdict results.Verdict
		// paired is added to the paired section; fallback is set when the paired run fails,
		// so that the head is measured alone and compared with the stored baseline.
		paired   string
		fallback bool
		warn     string // also in the warnings, when set
	}{
		{name: "empty store", setup: func(e *storeEnv) {}, before: true,
			why: "paired.mode is auto and the store holds no default-branch results (no baseline, no history)"},
		{name: "history below min_history", setup: func(e *storeEnv) { e.put(prBase) }, before: true,
			why: "paired.mode is auto and the store holds 1 default-branch result of this config, fewer than store.min_history (3)"},
		{name: "no result at the merge-base", setup: func(e *storeEnv) {
			e.put(e.a1)
			e.put(e.older[0])
			e.put(e.older[1])
		}, before: true, why: "paired.mode is auto and the merge-base `" + prBase[:7] + "` has no stored results (the nearest are 1 commit before it)"},
		// An A/A comparison: the decode cell's TTFT (a few samples, the prior's noise) may stay
		// inconclusive after the first comparison, and is then measured paired (rule 3).
		{name: "enough history", setup: func(e *storeEnv) {
			e.put(prBase)
			e.put(e.a1)
			e.put(e.older[0])
		}},
		{name: "first comparison left a cell slower", setup: func(e *storeEnv) {
			// The stored baseline and history decode twice as fast as the head (three history
			// runs besides the baseline's own: compare's minimum).
			e.putScaled(prBase, 2)
			e.putScaled(e.a1, 2.02)
			e.putScaled(e.older[0], 1.98)
			e.putScaled(e.older[1], 2.01)
		}, why: afterFirst + "1 cell slower and 0 inconclusive"},
		// A job with a budget decides within it by its adaptive reruns: no paired run after.
		{name: "a budget rules out a paired run after the first comparison", setup: func(e *storeEnv) {
			e.putScaled(prBase, 2)
			e.putScaled(e.a1, 2.02)
			e.putScaled(e.older[0], 1.98)
			e.putScaled(e.older[1], 2.01)
		}, extra: "budget: 10m\n", verdict: results.VerdictRegression},
		// A paired run that cannot run (here: a base server without the head's) falls back on
		// the stored baseline, and the comparison says why.
		{name: "a failed paired run falls back on the stored baseline", setup: func(e *storeEnv) { e.put(prBase) },
			paired: ", base_url: 'http://127.0.0.1:1'", fallback: true},
		// A budget that cannot pay for 2 blocks a side: no paired run, the head alone against the
		// stored baseline, saying what the paired run would have cost.
		{name: "a budget too small for a paired run", setup: func(e *storeEnv) { e.put(prBase) },
			extra: "budget: 1s\n", fallback: true, warn: "a paired run needs at least 2 blocks a side"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStoreEnv(t, 3)
			e.writeConfig(pairedConfig(e, 3, ", mode: auto"+tc.paired) + tc.extra)
			tc.setup(e)
			out, cmp, body := e.runPR()
			if cmp == nil {
				t.Fatalf("no comparison (outputs %v):\n%s", out, body)
			}
			first := readResults(t, filepath.Join(e.dir, "artifact", "results.json"))
			if got := first.Run.Pairing != nil; got != tc.before {
				t.Fatalf("results.json paired: %v, want %v (paired from the start)", got, tc.before)
			}
			head, _ := pairedArtifacts(t, e.actEnv)
			paired := head != nil && cmp.Settings.Pairing != nil
			firstCmp := filepath.Join(e.dir, "artifact", "comparison.first.json")
			switch {
			case tc.fallback:
				w := strings.Join(cmp.Warnings, "\n")
				if paired || !strings.Contains(w, "A paired run (paired.mode) failed, so the head was measured alone: `") || !strings.Contains(w, tc.warn) {
					t.Errorf("paired %v, warnings %q: want the stored baseline's comparison, saying the paired run failed (%q)", paired, cmp.Warnings, tc.warn)
				}
			case tc.before:
				if !paired || fileExistsT(firstCmp) {
					t.Fatalf("paired %v, first comparison kept %v: want a paired run from the start:\n%s", paired, fileExistsT(firstCmp), body)
				}
				wantPairedPage(t, "the comment", body, tc.why)
			case tc.verdict != "":
				if paired || fileExistsT(firstCmp) || cmp.Verdict != tc.verdict {
					t.Errorf("paired %v, verdict %s: want the stored baseline's comparison, %s", paired, cmp.Verdict, tc.verdict)
				}
			case !fileExistsT(firstCmp):
				// Compared with the stored baseline, which decided every cell.
				if paired || strings.Contains(body, "Paired A/B") || cmp.Verdict == results.VerdictRegression || cmp.Verdict == results.VerdictInconclusive {
					t.Errorf("paired %v, verdict %s: want the stored baseline's comparison, decided:\n%s", paired, cmp.Verdict, body)
				}
				if tc.why != "" {
					t.Errorf("no paired run after the first comparison, want one: %s", tc.why)
				}
			default:
				// Rule 3: the first comparison's undecided cells, measured paired.
				fc, err := results.ReadComparisonFile(firstCmp)
				if err != nil {
					t.Fatal(err)
				}
				var undecided []string
				for _, c := range fc.Cells {
					if c.Verdict == results.VerdictRegression || c.Verdict == results.VerdictInconclusive || c.Verdict == results.VerdictUnproven {
						undecided = append(undecided, c.Cell)
					}
				}
				var got []string
				for _, c := range cmp.Cells {
					got = append(got, c.Cell)
				}
				if !paired || strings.Join(got, ",") != strings.Join(undecided, ",") || len(got) == 0 {
					t.Errorf("paired %v over %v, want the first comparison's undecided cells %v", paired, got, undecided)
				}
				why := tc.why
				if why == "" {
					why = afterFirst
				}
				wantPairedPage(t, "the comment", body, why)
			}
		})
	}
}

// TestActionSplitPaired: in the split workflow `/bench paired` makes the decide job say paired
// (output paired, base-sha the merge-base), the measure job (no token) runs paired with the
// base commit it was given, and the report job compares the artifact's two paired sides and
// says in the check and the comment that the comparison is paired.
func TestActionSplitPaired(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.writeConfig(pairedConfig(e, 3, ""))
	e.benchComment("/bench paired")
	token := e.vars["INPUT_TOKEN"]
	e.vars["INPUT_MODE"] = "decide"
	decide := mustRun(t, e.actEnv)
	wantOutputs(t, decide, map[string]string{"run": "true", "paired": "true", "sha": prHead, "base-sha": prBase, "pr": "2"})
	delete(e.vars, "INPUT_TOKEN")
	e.vars["INPUT_MODE"], e.vars["INPUT_SHA"], e.vars["INPUT_BASE-SHA"], e.vars["INPUT_PR"], e.vars["INPUT_PAIRED"] = "measure", decide["sha"], decide["base-sha"], decide["pr"], decide["paired"]
	mustRun(t, e.actEnv)
	head, base := pairedArtifacts(t, e.actEnv)
	if head == nil || base.Engine.Commit != prBase {
		t.Fatalf("the measure job left no paired run of the base %s", prBase)
	}
	e.vars["INPUT_TOKEN"], e.vars["INPUT_MODE"] = token, "report"
	delete(e.vars, "INPUT_PAIRED")
	report := mustRun(t, e.actEnv)
	cmp, err := results.ReadComparisonFile(report["comparison"])
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Settings.Pairing == nil {
		t.Errorf("the report job compared unpaired")
	}
	st := e.srv.State()
	cr := oneCheck(t, st, prHead)
	why := "the measuring job ran paired"
	wantPairedPage(t, "the check's summary", cr.Summary, why)
	wantPairedPage(t, "the comment", oneComment(t, st), why)

	// An artifact whose paired base measured another commit than the decide job named is
	// refused: nothing posted.
	base.Engine.Commit = movedSHA
	if err := results.WriteFile(filepath.Join(e.dir, "artifact", "paired-base.json"), base); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := e.run(context.Background()); err == nil || !strings.Contains(err.Error(), "not the base f95f852 the decide job named") {
		t.Errorf("report of a paired base of another commit: %v\n%s", err, stderr)
	}
}

// TestActionBenchPairedWithShards: in a sharded workflow (decide with the shards input) a
// maintainer's /bench paired is refused with the reason, and paired.mode auto decides unpaired:
// the shards' runners each measure other cells, so none serves both sides.
func TestActionBenchPairedWithShards(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.writeConfig(pairedConfig(e, 3, ", mode: auto"))
	e.benchComment("/bench paired")
	e.vars["INPUT_MODE"], e.vars["INPUT_SHARDS"] = "decide", "2"
	out := mustRun(t, e.actEnv)
	wantOutputs(t, out, map[string]string{"verdict": "refused", "run": "false"})
	if rs := replies(e.srv.State()); len(rs) != 1 || !strings.Contains(rs[0].Body, "`/bench paired` was not run: this workflow splits the matrix into shards (input shards: 2)") {
		t.Errorf("replies %+v: want one saying why", rs)
	}

	// paired.mode auto with an empty store would pair; with shards it does not.
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	out = mustRun(t, e.actEnv)
	if out["run"] != "true" || out["paired"] != "false" {
		t.Errorf("decide outputs %v: want run true, paired false", out)
	}
}
