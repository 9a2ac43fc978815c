package compare_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// headOnlyFiles returns one summary run a side and no history, so decode/8K/4's noise is its
// prior (set to 2 % by headOnlyThresholds): with both sides measured again a few trials decide
// that cell, with the base's one stored run fixed no number of head trials can (its 2 % alone is
// above what 2δ needs). (With history the base pools the history's runs, and head trials can.)
func headOnlyFiles() compare.Input {
	base := summaryFile("m", map[int]float64{4: 450, 8: 600}, nil)
	head := summaryFile("m", map[int]float64{4: 441, 8: 594}, nil)
	// decode/8K/8 moves to the 16K row: two cells of one row that no cell decides would be
	// measured as a row instead.
	for _, f := range []*results.File{base, head} {
		f.Decode[1].Context, f.Decode[1].ContextLabel = 16384, "16K"
	}
	return compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}
}

// TestHeadOnlyRerunAdvice checks the rerun advice when only the head is measured again (the
// adaptive job, whose base is stored): the trials solve var_b/n_b + var_h/(n_h + k) ≤ target
// with n_b fixed, so they are at least the both-sides number, and a cell whose base run alone
// is too noisy is called undecidable with the reason "needs base reruns or paired mode"
// instead of being given a number that cannot decide it. Both-sides advice is unchanged.
// headOnlyThresholds are the defaults with a 2 % prior up to concurrency 4.
func headOnlyThresholds() compare.Thresholds {
	th := compare.DefaultThresholds()
	th.Prior.DecodeRate = []compare.ConcurrencyCV{{UpTo: 4, CV: 0.02}, {CV: 0.01}}
	th.Prior.SpecDecodeRate = th.Prior.DecodeRate // summary files cannot tell: the spec-decode prior applies
	return th
}

func TestHeadOnlyRerunAdvice(t *testing.T) {
	both := headOnlyThresholds()
	head := headOnlyThresholds()
	head.HeadOnlyReruns = true
	cb, err := compare.Compare(headOnlyFiles(), both)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := compare.Compare(headOnlyFiles(), head)
	if err != nil {
		t.Fatal(err)
	}
	item := func(a *results.RerunAdvice, cell string) *results.RerunItem {
		for i := range a.Items {
			if a.Items[i].Cell == cell {
				return &a.Items[i]
			}
		}
		return nil
	}
	if cb.Rerun == nil || ch.Rerun == nil {
		t.Fatalf("advice both %+v head %+v, want both", cb.Rerun, ch.Rerun)
	}
	if cb.Rerun.HeadOnly || !ch.Rerun.HeadOnly {
		t.Errorf("HeadOnly both %v head %v, want false and true", cb.Rerun.HeadOnly, ch.Rerun.HeadOnly)
	}
	// decode/8K/4: both sides decide it in a few trials; head trials cannot.
	if it := item(cb.Rerun, "decode/8K/4"); it == nil || it.FurtherTrials > 10 {
		t.Errorf("both sides: decode/8K/4 advice %+v, want a few trials", it)
	}
	if it := item(ch.Rerun, "decode/8K/4"); it != nil && slices.Contains(it.Metrics, results.MetricTotalTokPerS) {
		t.Errorf("head only: decode/8K/4 total tok/s advised %d head trials that cannot decide it", it.FurtherTrials)
	}
	found := false
	for _, u := range ch.Rerun.Undecidable {
		if u.Cell == "decode/8K/4" && slices.Contains(u.Metrics, results.MetricTotalTokPerS) {
			found = true
			if u.Reason != results.UndecidableNeedsBase {
				t.Errorf("decode/8K/4 undecidable for %q, want %q", u.Reason, results.UndecidableNeedsBase)
			}
		}
	}
	if !found {
		t.Errorf("head only: decode/8K/4 not listed undecidable: %+v", ch.Rerun.Undecidable)
	}
	if !strings.Contains(ch.Rerun.Rule.Text, "needs base reruns or paired mode") || !strings.Contains(ch.Rerun.Rule.Text, "on the head") {
		t.Errorf("head-only rule text does not say so: %s", ch.Rerun.Rule.Text)
	}
	// decode/16K/8 (1 % prior): head trials decide it, needing at least the both-sides number.
	b8, h8 := item(cb.Rerun, "decode/16K/8"), item(ch.Rerun, "decode/16K/8")
	if b8 == nil || h8 == nil || h8.FurtherTrials < b8.FurtherTrials {
		t.Errorf("decode/8K/8 advice both %+v head %+v, want head-only trials ≥ both-sides trials", b8, h8)
	}
	for _, u := range cb.Rerun.Undecidable {
		if u.Reason != "" {
			t.Errorf("both sides: %s undecidable for %q, want no reason (the trial limit)", u.Cell, u.Reason)
		}
	}
}
