package calibrate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// Settings say what to simulate.
type Settings struct {
	// AA and AB are the numbers of A/A and A/B whole-matrix comparisons.
	AA, AB int
	Seed   uint64
	// NoiseScale multiplies the realistic CVs (1). Above 1 the true noise exceeds the prior.
	NoiseScale float64
	// Trials is the number of runs pooled on each side (1).
	Trials int
	// History is the number of earlier base runs given as --history (0: none, the prior
	// applies).
	History    int
	Thresholds compare.Thresholds
}

// DefaultSettings are the full calibration: 1000 A/A and 400 A/B comparisons, one run a side,
// no history, the default thresholds.
func DefaultSettings() Settings {
	return Settings{AA: 1000, AB: 400, Seed: 1, NoiseScale: 1, Trials: 1, Thresholds: compare.DefaultThresholds()}
}

// Rate is a share k/n with its 95 % Wilson interval.
type Rate struct {
	K, N      int
	P         float64
	Low, High float64
}

func rate(k, n int) Rate {
	if n == 0 {
		return Rate{}
	}
	p := float64(k) / float64(n)
	const z = 1.959964
	nf := float64(n)
	den := 1 + z*z/nf
	center := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return Rate{K: k, N: n, P: p, Low: math.Max(0, center-half), High: math.Min(1, center+half)}
}

// String formats the rate as "0.6 % (6/1000; 95 % CI 0.3–1.3 %)".
func (r Rate) String() string {
	return fmt.Sprintf("%.1f %% (%d/%d; 95 %% CI %.1f–%.1f %%)", r.P*100, r.K, r.N, r.Low*100, r.High*100)
}

// Report holds the measured error rates.
type Report struct {
	Settings Settings
	// AARegression is the share of A/A comparisons with any regression verdict (target ≤ 1 %).
	AARegression Rate
	// AAImprovement is the share of A/A comparisons with any improvement verdict.
	AAImprovement Rate
	// AAUnchanged and AAInconclusive are the mean shares of tested cell-metrics with that
	// verdict in A/A comparisons.
	AAUnchanged, AAInconclusive float64
	// ABRowFlagged is the share of A/B comparisons (a 2δ slowdown in one decode row) in which
	// that row has a regression verdict (target ≥ 90 %).
	ABRowFlagged Rate
	// ByRow is ABRowFlagged per slowed row.
	ByRow []RowRate
	// ABRowCellsFlagged is the mean share of the slowed row's measured cells flagged.
	ABRowCellsFlagged float64
	// ABFalseOutside is the share of A/B comparisons with a regression verdict outside the
	// slowed row; ABFDP is the mean false discovery proportion among regression verdicts
	// (target ≤ q).
	ABFalseOutside Rate
	ABFDP          float64
	Tests          int // cell-metrics tested per comparison (last one)
}

// RowRate is the detection rate for one slowed row.
type RowRate struct {
	Row  string
	Rate Rate
}

// Run simulates s and returns the measured rates. It stops early when ctx is done.
func Run(ctx context.Context, s Settings) (*Report, error) {
	th := s.Thresholds
	rep := &Report{Settings: s}
	trials := max(1, s.Trials)
	draw := func(m *Matrix, r *rand.Rand, tag string, slow *Slowdown) []*results.File {
		var fs []*results.File
		for t := range trials {
			fs = append(fs, m.Run(r, fmt.Sprintf("%s-%d", tag, t), slow))
		}
		return fs
	}
	var aaReg, aaImp int
	var unch, inc float64
	for i := range s.AA {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := NewMatrix(s.Seed*1_000_003+uint64(i), s.NoiseScale)
		r := rand.New(rand.NewPCG(s.Seed, uint64(i)))
		in := compare.Input{Base: draw(m, r, "base", nil), Head: draw(m, r, "head", nil)}
		for h := range s.History {
			in.History = append(in.History, m.Run(r, fmt.Sprintf("hist-%d", h), nil))
		}
		c, err := compare.Compare(in, th)
		if err != nil {
			return nil, err
		}
		if c.Summary.Counts.Regression > 0 {
			aaReg++
		}
		if c.Summary.Counts.Improvement > 0 {
			aaImp++
		}
		if c.Summary.Tests > 0 {
			unch += float64(c.Summary.Counts.Unchanged) / float64(c.Summary.Tests)
			inc += float64(c.Summary.Counts.Inconclusive) / float64(c.Summary.Tests)
		}
		rep.Tests = c.Summary.Tests
	}
	rep.AARegression, rep.AAImprovement = rate(aaReg, s.AA), rate(aaImp, s.AA)
	if s.AA > 0 {
		rep.AAUnchanged, rep.AAInconclusive = unch/float64(s.AA), inc/float64(s.AA)
	}

	rows := map[string][2]int{}
	var flagged, outside int
	var fdp, cellsFlagged float64
	for i := range s.AB {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := NewMatrix(s.Seed*2_000_003+uint64(i), s.NoiseScale)
		r := rand.New(rand.NewPCG(s.Seed+1, uint64(i)))
		row := results.ContextLabel(contexts[i%len(contexts)])
		slow := &Slowdown{ContextLabel: row, RateFactor: 1 - 2*th.Delta[results.MetricTotalTokPerS], TTFTFactor: 1 + 2*th.Delta[results.MetricTTFT]}
		in := compare.Input{Base: draw(m, r, "base", nil), Head: draw(m, r, "head", slow)}
		for h := range s.History {
			in.History = append(in.History, m.Run(r, fmt.Sprintf("hist-%d", h), nil))
		}
		c, err := compare.Compare(in, th)
		if err != nil {
			return nil, err
		}
		var inRow, out, rowCells, rowFlaggedCells int
		for _, cell := range c.Cells {
			isRow := cell.Phase == results.PhaseDecode && cell.ContextLabel == row
			if isRow && cell.BaseStatus.Measured() {
				rowCells++
				if cell.Verdict == results.VerdictRegression {
					rowFlaggedCells++
				}
			}
			for _, mc := range cell.Metrics {
				if mc.Verdict != results.VerdictRegression {
					continue
				}
				if isRow {
					inRow++
				} else {
					out++
				}
			}
		}
		rr := rows[row]
		rr[1]++
		if inRow > 0 {
			flagged++
			rr[0]++
		}
		rows[row] = rr
		if out > 0 {
			outside++
		}
		if inRow+out > 0 {
			fdp += float64(out) / float64(inRow+out)
		}
		if rowCells > 0 {
			cellsFlagged += float64(rowFlaggedCells) / float64(rowCells)
		}
	}
	rep.ABRowFlagged, rep.ABFalseOutside = rate(flagged, s.AB), rate(outside, s.AB)
	if s.AB > 0 {
		rep.ABFDP, rep.ABRowCellsFlagged = fdp/float64(s.AB), cellsFlagged/float64(s.AB)
	}
	for _, ctx := range contexts {
		label := results.ContextLabel(ctx)
		if rr, ok := rows[label]; ok {
			rep.ByRow = append(rep.ByRow, RowRate{Row: label, Rate: rate(rr[0], rr[1])})
		}
	}
	return rep, nil
}
