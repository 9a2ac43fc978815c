package report

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// withAcceptance sets every measured decode cell of f (and its trials) to read acceptance
// length l; pinned makes f a pinned run whose acceptance pass holds its concurrency-1 cells,
// reading passLength, while its matrix reads the pinned l.
func withAcceptance(f *results.File, l float64, pinned bool, passLength float64) {
	set := func(c *results.DecodeCell, v float64) {
		tel := func(t **results.Telemetry) {
			if *t == nil {
				*t = &results.Telemetry{Source: "server"}
			} else {
				cp := **t
				*t = &cp
			}
			(*t).SpecAcceptanceLength = &v
		}
		tel(&c.Telemetry)
		for i := range c.Trials {
			tel(&c.Trials[i].Telemetry)
		}
	}
	var pass []results.DecodeCell
	for i := range f.Decode {
		c := &f.Decode[i]
		if !c.Status.Measured() {
			continue
		}
		set(c, l)
		if pinned && c.Concurrency == 1 {
			p := *c
			p.Trials = append([]results.DecodeTrial(nil), c.Trials...)
			set(&p, passLength)
			pass = append(pass, p)
		}
	}
	if pinned {
		f.SpecDecode = &results.SpecDecode{Mode: results.SpecDecodePinned, PinnedAcceptanceLength: l, PinnedFrom: results.PinnedFromConfig, AcceptancePass: pass}
	}
}

// TestCommentSpeculativeAcceptance: a comment on a pinned head whose acceptance pass fell lists
// the acceptance regression like any slower cell (the acceptance length decides it: the pinned
// matrix's speed did not move) and says how acceptance was measured.
func TestCommentSpeculativeAcceptance(t *testing.T) {
	s := commentScenarios(t)["speculative"]
	got, err := NewComment(s.c, s.x)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"acceptance length",
		"**Speculative acceptance** (tokens per draft step, base → head; the head's matrix was served with acceptance pinned at 3.00 tokens/step (spec_decode: pinned), its acceptance measured in a separate unpinned pass): ❌ decode 8K × 1 3.00 → 2.55 (−15.0 %) · ❌ decode 32K × 1 3.00 → 2.55 (−15.0 %) · 6 cells measured on one side only.",
		"| decode 8K × 1 | −15.0 % |",
		"3.00 tokens/step → 2.55 tokens/step |",
		"by acceptance length: changes and 95 % ranges</summary>",
	} {
		if !strings.Contains(got.Body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, got.Body)
		}
	}
}
