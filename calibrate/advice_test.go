package calibrate

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunAdvice: the advice check follows the advised reruns of comparisons left undecided and
// counts the promised cells decided; its figures depend on the seed alone, not on how many
// comparisons run at once; a procedure of several head runs is refused.
func TestRunAdvice(t *testing.T) {
	s := AdviceSettings{World: DefaultWorldSettings(), Trials: 1, Advise: func(c *results.Comparison) [][]string {
		var out [][]string
		for _, g := range report.AdvisedReruns(c) {
			out = append(out, g.Cells)
		}
		return out
	}}
	s.World.Models, s.World.Procedures, s.World.Shapes, s.World.Pairs = []WorldModel{WorldGaussian}, []Procedure{ProcHistory}, []Shape{ShapeRowsFrom32K}, 6
	text := func(workers int) string {
		s.World.Workers = workers
		rep, err := RunAdvice(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != 2 {
			t.Fatalf("%d rows, want A/A and rows>=32K", len(rep.Rows))
		}
		for _, r := range rep.Rows {
			if r.Advised.N != 6 || r.Advised.K == 0 || r.Reruns < r.Advised.K || r.CellsDecided.N == 0 {
				t.Errorf("%s %s: advised %d of %d, %d reruns, %d promised cells: want every figure counted", r.Model, shapeName(r.Shape), r.Advised.K, r.Advised.N, r.Reruns, r.CellsDecided.N)
			}
			if r.CellsDecided.K > r.CellsDecided.N || r.RerunsDecided.K > r.Reruns {
				t.Errorf("%s: more decided than promised: %+v", shapeName(r.Shape), r)
			}
		}
		var b bytes.Buffer
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	one, two := text(1), text(2)
	if one != two {
		t.Errorf("the figures depend on the workers:\n%s\n%s", one, two)
	}
	if !strings.Contains(one, "promised cells decided") {
		t.Errorf("table:\n%s", one)
	}
	s.World.Procedures = []Procedure{ProcRuns3}
	if _, err := RunAdvice(context.Background(), s); err == nil || !strings.Contains(err.Error(), "runs3") {
		t.Errorf("runs3: %v, want a refusal naming it", err)
	}
}
