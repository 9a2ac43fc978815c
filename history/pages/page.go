package pages

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/speedmatrix/speedmatrix/history"
	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// Chart size on the page: 8 × 3 inches, which a browser shows as 768 × 288 CSS pixels.
const (
	chartW, chartH         = 8 * vg.Inch, 3 * vg.Inch
	chartPixW, chartPixH   = 768, 288
	siteIndex, siteCharts  = "index.html", "charts/"
	pageTitle              = "Speed matrix history"
	pageGenerator          = "speedmatrix history --html"
	maxShiftsPerCellInText = 20
)

// ChartName returns the file name of a series' chart inside the site: "charts/decode-8K-32-total_tok_per_s.svg".
func ChartName(s *history.Series) string {
	return siteCharts + slug(s.Cell.String()+"-"+string(s.Metric)) + ".svg"
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// slug turns s into a safe file name part.
func slug(s string) string {
	return strings.Trim(unsafeName.ReplaceAllString(s, "-"), "-.")
}

// Site renders the static page of h: "index.html" and one chart per cell of its main metric
// under "charts/", keyed by path relative to the site's folder. The page has no scripts and
// loads nothing from elsewhere; every text from the results files is escaped.
func Site(h *history.History) (map[string][]byte, error) {
	site := map[string][]byte{}
	data := pageData{Title: pageTitle, Generator: pageGenerator, Warnings: h.Warnings, Runs: len(h.Files), Order: h.Order}
	if n := len(h.Files); n > 0 {
		first, last := h.Files[0], h.Files[n-1]
		data.Span = fmt.Sprintf("%s … %s", history.ShortCommit(first.Engine.Commit), history.ShortCommit(last.Engine.Commit))
		data.Setup = history.SetupLine(last)
		data.Latest = latestMatrix(last)
	}
	data.Method = h.MethodText()
	for _, s := range h.Series {
		for _, sh := range s.Shifts {
			data.Shifts = append(data.Shifts, shiftRow(s, sh))
		}
		if s.Metric != history.MainMetric(s.Cell.Phase) {
			continue
		}
		if s.Values() == 0 {
			data.Unmeasured = append(data.Unmeasured, unmeasured{Cell: s.Cell.String(), Status: lastStatus(s)})
			continue
		}
		svg, err := s.SVG(chartW, chartH)
		if err != nil {
			return nil, err
		}
		name := ChartName(s)
		site[name] = svg
		tr := trend{Cell: s.Cell.String(), Metric: s.Metric.Title(), Src: name, Alt: fmt.Sprintf("%s %s over %d runs", s.Cell, s.Metric.Title(), len(s.Points)),
			W: chartPixW, H: chartPixH, Values: s.Values(), Runs: len(s.Points)}
		for i, sh := range s.Shifts {
			if i == maxShiftsPerCellInText {
				break
			}
			tr.Shifts = append(tr.Shifts, s.ShiftText(sh))
		}
		if n := len(s.Points); n > 0 && s.Points[n-1].Value != nil {
			tr.Latest = s.Metric.FormatValue(*s.Points[n-1].Value)
		}
		data.Trends = append(data.Trends, tr)
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("history page: %w", err)
	}
	site[siteIndex] = buf.Bytes()
	return site, nil
}

// lastStatus is the status of the cell in the latest run that held it, as text.
func lastStatus(s *history.Series) string {
	for i := len(s.Points) - 1; i >= 0; i-- {
		if p := s.Points[i]; p.Status != "" {
			return p.StatusText()
		}
	}
	return "absent"
}

// shiftRow is one row of the change-point table.
func shiftRow(s *history.Series, sh history.Shift) shiftData {
	return shiftData{
		Cell: s.Cell.String(), Metric: s.Metric.Title(), Direction: string(sh.Direction), Regression: sh.Direction == "regression",
		Commit: history.ShortCommit(sh.Commit), Full: sh.Commit, Date: history.DateText(sh.Date), Before: s.Metric.FormatValue(sh.Before),
		After: s.Metric.FormatValue(sh.After), Change: numfmt.FormatPercent(sh.Change), P: fmt.Sprintf("%.3g", sh.P),
	}
}

// latestMatrix lays out the latest run with the report's page model.
func latestMatrix(f *results.File) *latest {
	pg := report.NewPage(f)
	l := &latest{Commit: history.ShortCommit(f.Engine.Commit), Date: history.DateText(f.Run.Start), RunID: f.Run.ID, MatrixLine: pg.MatrixLine,
		TimeScale: pg.TimeScale, Partial: pg.Partial, Prefill: pg.Prefill, Concurrency: pg.Decode.Concurrency, Decode: pg.Decode.Rows}
	return l
}

// pageData is what the template shows.
type pageData struct {
	Title, Generator, Span, Setup, Method, Order string
	Runs                                         int
	Warnings                                     []string
	Shifts                                       []shiftData
	Latest                                       *latest
	Trends                                       []trend
	Unmeasured                                   []unmeasured
}

type unmeasured struct{ Cell, Status string }

type shiftData struct {
	Cell, Metric, Direction, Commit, Full, Date, Before, After, Change, P string
	Regression                                                            bool
}

type latest struct {
	Commit, Date, RunID, MatrixLine, TimeScale, Partial string
	Prefill                                             []report.PrefillRow
	Concurrency                                         []int
	Decode                                              []report.DecodeRow
}

type trend struct {
	Cell, Metric, Src, Alt, Latest string
	W, H, Values, Runs             int
	Shifts                         []string
}

// pageHead is the head of every page of the site: its title, and the style of its tables,
// charts and verdicts (no scripts, nothing loaded from elsewhere).
const pageHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{{.Generator}}">
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; white-space: nowrap; }
.num { text-align: right; }
.regression { color: #c62828; font-weight: 600; }
.improvement { color: #2e7d32; font-weight: 600; }
.warning { background: #fff3cd; padding: 0.5rem; }
figure { margin: 1rem 0 2rem; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9rem; }
.muted { color: #666; }
</style>
</head>
`

var pageTemplate = template.Must(template.New("page").Parse(pageHead + `<body>
<h1>{{.Title}}</h1>
<p>{{.Runs}} runs{{if .Span}} ({{.Span}}){{end}}{{if .Setup}} · {{.Setup}}{{end}}</p>
{{if .Order}}<p class="muted">{{.Order}}</p>
{{end}}{{range .Warnings}}<p class="warning">Warning: {{.}}</p>
{{end}}
<h2 id="change-points">Change points</h2>
{{if .Method}}<p class="muted">{{.Method}}. Each line is the first commit of a sustained new level.</p>{{end}}
{{if .Shifts}}<table>
<thead><tr><th>Cell</th><th>Metric</th><th>Direction</th><th>First commit</th><th>Date</th><th>Before</th><th>After</th><th>Change</th><th>p</th></tr></thead>
<tbody>
{{range .Shifts}}<tr><td>{{.Cell}}</td><td>{{.Metric}}</td><td class="{{if .Regression}}regression{{else}}improvement{{end}}">{{.Direction}}</td><td title="{{.Full}}">{{.Commit}}</td><td>{{.Date}}</td><td class="num">{{.Before}}</td><td class="num">{{.After}}</td><td class="num">{{.Change}}</td><td class="num">{{.P}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p>None: no cell-metric shifted by more than its δ.</p>{{end}}
{{with .Latest}}<h2 id="latest">Latest matrix</h2>
<p>Commit {{.Commit}} · {{.Date}}{{if .RunID}} · run {{.RunID}}{{end}}{{if .MatrixLine}} · {{.MatrixLine}}{{end}}</p>
{{if .TimeScale}}<p class="muted">{{.TimeScale}}</p>{{end}}
{{if .Partial}}<p class="warning">Partial run: {{.Partial}}</p>{{end}}
{{if .Prefill}}<h3>Prefill</h3>
<table>
<thead><tr><th>Context</th><th>Prompt tok/s</th><th>TTFT</th></tr></thead>
<tbody>
{{range .Prefill}}<tr><td>{{.Context}}</td><td class="num">{{.TokPerS}}</td><td class="num">{{.TTFT}}</td></tr>
{{end}}</tbody>
</table>{{end}}
{{if .Decode}}<h3>Sustained decode</h3>
<p class="muted">total tok/s · rows are context length, columns are simultaneous requests</p>
<table>
<thead><tr><th>Context</th>{{range .Concurrency}}<th class="num">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Decode}}<tr><td>{{.Context}}</td>{{range .Cells}}<td class="num">{{range $i, $l := .}}{{if $i}}<br>{{end}}{{$l}}{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}
{{end}}
<h2 id="trends">Trends</h2>
{{range .Trends}}<figure>
<img src="{{.Src}}" width="{{.W}}" height="{{.H}}" alt="{{.Alt}}">
<figcaption><strong>{{.Cell}}</strong> · {{.Metric}} · {{.Values}} of {{.Runs}} runs with a value{{if .Latest}} · latest {{.Latest}}{{end}}
{{if .Shifts}}<ul>{{range .Shifts}}<li>{{.}}</li>{{end}}</ul>{{end}}</figcaption>
</figure>
{{end}}
{{if .Unmeasured}}<p class="muted">No run measured {{range $i, $u := .Unmeasured}}{{if $i}}, {{end}}{{$u.Cell}} ({{$u.Status}}){{end}}.</p>{{end}}
<p class="muted">Written by {{.Generator}}.</p>
</body>
</html>
`))
