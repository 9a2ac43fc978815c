package history

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/speedmatrix/speedmatrix/compare/changepoint"
	"github.com/speedmatrix/speedmatrix/results"
)

// Chart colours: the values, the levels between shifts, a regression and an improvement.
var (
	colorValues      = color.RGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff}
	colorLevel       = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	colorRegression  = color.RGBA{R: 0xc6, G: 0x28, B: 0x28, A: 0xff}
	colorImprovement = color.RGBA{R: 0x2e, G: 0x7d, B: 0x32, A: 0xff}
)

// maxTickLabels is the most commit labels the x axis shows.
const maxTickLabels = 12

// unit is the y axis label of metric m.
func unit(m results.Metric) string {
	if m.HigherIsBetter() {
		return m.Title() + " (tok/s, higher is better)"
	}
	return m.Title() + " (ms, lower is better)"
}

// SVG draws the series as an SVG chart of size w × h: one point per run with a value (x is the
// run's place in the history, labelled with its short commit), the mean level between shifts as
// grey segments, and each shift as a dashed vertical line at its first commit, red for a
// regression and green for an improvement.
func (s *Series) SVG(w, h vg.Length) ([]byte, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s · %s", s.Cell, s.Metric.Title())
	p.Y.Label.Text = unit(s.Metric)
	p.X.Label.Text = "commit (oldest first)"
	p.Add(plotter.NewGrid())

	var xys plotter.XYs
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, pt := range s.Points {
		if pt.Value != nil {
			xys = append(xys, plotter.XY{X: float64(i), Y: *pt.Value})
			lo, hi = math.Min(lo, *pt.Value), math.Max(hi, *pt.Value)
		}
	}
	n := len(s.Points)
	p.X.Min, p.X.Max = -0.5, math.Max(float64(n)-0.5, 0.5)
	if len(xys) == 0 {
		p.Title.Text += " (no values)"
		p.Y.Min, p.Y.Max = 0, 1
	} else {
		pad := math.Max((hi-lo)*0.15, math.Abs(hi)*0.02)
		p.Y.Min, p.Y.Max = math.Max(0, lo-pad), hi+pad
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("chart of %s %s: %w", s.Cell, s.Metric, err)
		}
		line.Color = colorValues
		line.Width = vg.Points(1)
		points.Color = colorValues
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(2)
		p.Add(line, points)
		if err := s.addLevels(p); err != nil {
			return nil, err
		}
	}
	for _, sh := range s.Shifts {
		x := float64(sh.Index) - 0.5
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		l.Color = colorImprovement
		if sh.Direction == changepoint.Regression {
			l.Color = colorRegression
		}
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
	}
	p.X.Tick.Marker = s.ticks()

	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart of %s %s: %w", s.Cell, s.Metric, err)
	}
	return buf.Bytes(), nil
}

// addLevels draws the mean of every segment between shifts.
func (s *Series) addLevels(p *plot.Plot) error {
	bounds := []int{0}
	for _, sh := range s.Shifts {
		bounds = append(bounds, sh.Index)
	}
	bounds = append(bounds, len(s.Points))
	for i := 0; i+1 < len(bounds); i++ {
		var sum float64
		var k int
		for _, pt := range s.Points[bounds[i]:bounds[i+1]] {
			if pt.Value != nil {
				sum += *pt.Value
				k++
			}
		}
		if k == 0 {
			continue
		}
		m := sum / float64(k)
		l, err := plotter.NewLine(plotter.XYs{{X: float64(bounds[i]) - 0.5, Y: m}, {X: float64(bounds[i+1]) - 0.5, Y: m}})
		if err != nil {
			return err
		}
		l.Color = colorLevel
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(l)
	}
	return nil
}

// ticks labels at most maxTickLabels runs with their short commits, always the shifts' ones.
func (s *Series) ticks() plot.ConstantTicks {
	n := len(s.Points)
	step := max(1, (n+maxTickLabels-1)/maxTickLabels)
	label := map[int]bool{}
	for i := 0; i < n; i += step {
		label[i] = true
	}
	for _, sh := range s.Shifts {
		// A shift's commit is always labelled; regular labels too close to it go.
		for d := 1; d < max(2, (step+1)/2+1); d++ {
			delete(label, sh.Index-d)
			delete(label, sh.Index+d)
		}
	}
	for _, sh := range s.Shifts {
		label[sh.Index] = true
	}
	var ts plot.ConstantTicks
	for i := range n {
		if label[i] {
			ts = append(ts, plot.Tick{Value: float64(i), Label: ShortCommit(s.Points[i].Commit)})
		} else {
			ts = append(ts, plot.Tick{Value: float64(i)})
		}
	}
	return ts
}
