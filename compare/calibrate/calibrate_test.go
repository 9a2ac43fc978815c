package calibrate

import (
	"context"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

var full = flag.Bool("calibrate", false, "run the full calibration (1000 A/A, 400 A/B) and check the targets")

// TestCalibrationSmall is the CI version: few comparisons, loose bounds that still fail when the
// procedure breaks (a broken FDR control flags most A/A pairs; a broken test finds no row).
func TestCalibrationSmall(t *testing.T) {
	s := DefaultSettings()
	s.AA, s.AB = 40, 16
	rep, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Both.AARegression; r.K > 3 {
		t.Errorf("A/A false alarms %v, want at most 3 of 40", r)
	}
	// Rows 8K–256K hold cells at concurrency ≥ 8 and must be found.
	for _, rr := range rep.First.ByRow {
		if rr.Row == "512K" || rr.Row == "1019K" {
			continue
		}
		if rr.Rate.K < rr.Rate.N {
			t.Errorf("row %s flagged %v, want every time", rr.Row, rr.Rate)
		}
	}
	if rep.Both.ABFDP > s.Thresholds.FDR {
		t.Errorf("false discovery proportion %.3f above q", rep.Both.ABFDP)
	}
	if rep.Tests != 190 {
		t.Errorf("tests per comparison %d, want 190", rep.Tests)
	}
}

// TestCalibrationFull checks the targets with the full calibration: go test -calibrate.
func TestCalibrationFull(t *testing.T) {
	if !*full {
		t.Skip("run with -calibrate (about 30 s)")
	}
	s := DefaultSettings()
	rep, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Figures{rep.First, rep.Both} {
		if f.AARegression.P > 0.01 {
			t.Errorf("A/A false alarms %v above 1 %%", f.AARegression)
		}
		if f.ABFDP > s.Thresholds.FDR {
			t.Errorf("false discovery proportion %.4f above q", f.ABFDP)
		}
		for _, rr := range f.ByRow {
			if rr.Row == "512K" || rr.Row == "1019K" {
				continue // only concurrency ≤ 4 measured: 5–20 % noise hides a 6 % change
			}
			if rr.Rate.P < 0.90 {
				t.Errorf("row %s flagged %v, below 90 %%", rr.Row, rr.Rate)
			}
		}
	}
	var b strings.Builder
	if err := rep.Write(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}

// The generator's cells have the reference's shape and their noise lies in the stated ranges.
func TestGenerator(t *testing.T) {
	m := NewMatrix(1, 1)
	var measured, over int
	for _, c := range m.Cells {
		if c.ID.Phase != results.PhaseDecode {
			continue
		}
		if c.Status.Measured() {
			measured++
			lo, hi := rateCVRange(c.ID.Concurrency)
			if c.RateCV < lo || c.RateCV > hi || c.TTFTCV < 0.10 || c.TTFTCV > 0.20 {
				t.Errorf("%s: CVs %v %v outside the ranges", c.ID, c.RateCV, c.TTFTCV)
			}
		} else {
			over++
		}
	}
	if measured != 43 || over != 21 {
		t.Errorf("measured %d, over capacity %d; want 43 and 21", measured, over)
	}
	f := m.Run(rand.New(rand.NewPCG(1, 2)), "x", nil)
	if err := results.Validate(f); err != nil {
		t.Fatalf("generated file is not valid: %v", err)
	}
}
