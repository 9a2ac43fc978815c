package report

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// Legend and caption lines of the speed-matrix page, as the reference report prints them.
const (
	TitleText      = "Speed test matrix"
	prefillCaption = "prompt tok/s by context length"
	decodeCaption  = "total tok/s · rows are context length, columns are simultaneous requests"
	legendStatus   = "Requests queued: the server could not run all requests at once, so some waited in a queue. Over capacity: not run because this many requests at this context would exceed the server's KV cache."
	legendTTFT     = "TTFT is measured after the benchmark warms the server's prompt cache, so it mostly excludes prefill."
	allCaption     = "Latencies are medians. Total tok/s is output across all simultaneous requests."
	// legendNotMeasured explains the cells a partial run planned but did not reach.
	legendNotMeasured = "Not measured: planned, but the run ended before it reached this cell."
)

// Page is the speed-matrix page of one results file with every number already formatted: the
// model that the markdown, JSON and terminal renderings share.
type Page struct {
	Title      string `json:"title"`
	Subtitle   string `json:"subtitle,omitempty"`
	EngineLine string `json:"engine_line,omitempty"`
	MatrixLine string `json:"matrix_line,omitempty"`
	// TimeScale says, for a results file measured against the simulator at a speedup, that the
	// figures are in the profile's time; "" for a real server.
	TimeScale     string       `json:"time_scale,omitempty"`
	Partial       string       `json:"partial,omitempty"`
	Hardware      []results.KV `json:"hardware"`
	Engine        []results.KV `json:"engine"`
	Run           []results.KV `json:"run"`
	LaunchCommand string       `json:"launch_command,omitempty"`
	Prefill       []PrefillRow `json:"prefill"`
	Decode        DecodeMatrix `json:"decode"`
	// Columns and Measurements are the "All measurements" table.
	Columns      []string   `json:"columns"`
	Measurements [][]string `json:"measurements"`
	Notes        []string   `json:"notes,omitempty"`
	// NotMeasured is the legend of the cells the run planned but did not reach; empty when
	// there are none.
	NotMeasured string `json:"not_measured,omitempty"`
}

// PrefillRow is one entry of the prefill list.
type PrefillRow struct {
	Context  string `json:"context"`
	TokPerS  string `json:"prompt_tok_per_s"`
	TTFT     string `json:"ttft"`
	Measured bool   `json:"measured"`
}

// DecodeMatrix is the sustained-decode matrix: rows are contexts, columns concurrency levels.
type DecodeMatrix struct {
	Concurrency []int       `json:"concurrency"`
	Rows        []DecodeRow `json:"rows"`
}

// DecodeRow is one context of the decode matrix; Cells[i] holds the lines of the cell at
// Concurrency[i], empty where the matrix has no such cell.
type DecodeRow struct {
	Context string     `json:"context"`
	Cells   [][]string `json:"cells"`
}

// NewPage builds the page of f. A file measured against the simulator at a speedup is shown in
// the profile's time (rates ÷ speedup, times × speedup), with a line that says so.
func NewPage(f *results.File) *Page {
	scale := f.TimeScale()
	f = inProfileTime(f, scale)
	p := &Page{
		TimeScale:     pageTimeScaleLine(scale),
		Title:         TitleText,
		Subtitle:      subtitle(f),
		EngineLine:    joinNonEmpty(" · ", f.Engine.Name, f.Engine.Version, f.Engine.Quantization),
		Hardware:      hardwareKV(&f.Hardware),
		Engine:        engineKV(&f.Engine),
		Run:           runKV(&f.Run),
		LaunchCommand: f.Run.LaunchCommand,
		Columns:       results.MeasurementColumns(),
		Notes:         f.Notes,
	}
	if f.Run.Partial {
		p.Partial = f.Run.PartialReason
		if p.Partial == "" {
			p.Partial = "the run ended before every cell was measured"
		}
	}
	// Cells the run planned but did not reach (a partial run) show as not measured.
	var missingPrefill, missingDecode []results.CellID
	for _, id := range f.NotMeasured() {
		if id.Phase == results.PhasePrefill {
			missingPrefill = append(missingPrefill, id)
		} else {
			missingDecode = append(missingDecode, id)
		}
	}
	for i := range f.Prefill {
		c := &f.Prefill[i]
		rate, ttft := c.ListText()
		p.Prefill = append(p.Prefill, PrefillRow{Context: c.ContextLabel, TokPerS: rate, TTFT: ttft, Measured: c.Status.Measured()})
		p.Measurements = append(p.Measurements, c.MeasurementRow())
	}
	for _, id := range missingPrefill {
		p.Prefill = append(p.Prefill, PrefillRow{Context: id.ContextLabel, TokPerS: results.NotMeasuredDisplay, TTFT: numfmt.Dash})
		p.Measurements = append(p.Measurements, results.NotMeasuredRow(id))
	}
	p.Decode = decodeMatrix(f.Decode, missingDecode)
	for i := range f.Decode {
		p.Measurements = append(p.Measurements, f.Decode[i].MeasurementRow())
	}
	for _, id := range missingDecode {
		p.Measurements = append(p.Measurements, results.NotMeasuredRow(id))
	}
	p.MatrixLine = matrixLine(p.Decode, p.Prefill)
	if len(missingPrefill)+len(missingDecode) > 0 {
		p.NotMeasured = legendNotMeasured
	}
	return p
}

// decodeMatrix lays the decode cells out by context (in order of size) and concurrency, with the
// planned cells missing from the file as not measured.
func decodeMatrix(cells []results.DecodeCell, missing []results.CellID) DecodeMatrix {
	type ctx struct {
		tokens int
		label  string
	}
	var ctxs []ctx
	var conc []int
	at := map[results.CellID]*results.DecodeCell{}
	for i := range cells {
		c := &cells[i]
		if !slices.ContainsFunc(ctxs, func(x ctx) bool { return x.label == c.ContextLabel }) {
			ctxs = append(ctxs, ctx{c.Context, c.ContextLabel})
		}
		if !slices.Contains(conc, c.Concurrency) {
			conc = append(conc, c.Concurrency)
		}
		at[c.ID()] = c
	}
	notMeasured := map[results.CellID]bool{}
	for _, id := range missing {
		n, _ := results.ParseContext(id.ContextLabel)
		if !slices.ContainsFunc(ctxs, func(x ctx) bool { return x.label == id.ContextLabel }) {
			ctxs = append(ctxs, ctx{n, id.ContextLabel})
		}
		if !slices.Contains(conc, id.Concurrency) {
			conc = append(conc, id.Concurrency)
		}
		notMeasured[id] = true
	}
	slices.SortStableFunc(ctxs, func(a, b ctx) int { return a.tokens - b.tokens })
	slices.Sort(conc)
	m := DecodeMatrix{Concurrency: conc}
	for _, x := range ctxs {
		row := DecodeRow{Context: x.label, Cells: make([][]string, len(conc))}
		for j, n := range conc {
			id := results.CellID{Phase: results.PhaseDecode, ContextLabel: x.label, Concurrency: n}
			if c := at[id]; c != nil {
				row.Cells[j] = c.MatrixText()
			} else if notMeasured[id] {
				row.Cells[j] = []string{results.NotMeasuredDisplay}
			}
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// matrixLine says what the matrix covers: "8 contexts (8K–1019K) × 8 concurrency levels
// (1–128) · prefill at 8K, 16K, …".
func matrixLine(m DecodeMatrix, prefill []PrefillRow) string {
	var parts []string
	if len(m.Rows) > 0 {
		first, last := m.Rows[0].Context, m.Rows[len(m.Rows)-1].Context
		parts = append(parts, textout.Plural(len(m.Rows), "context", "contexts")+" ("+span(first, last)+") × "+
			textout.Plural(len(m.Concurrency), "concurrency level", "concurrency levels")+" ("+
			span(strconv.Itoa(m.Concurrency[0]), strconv.Itoa(m.Concurrency[len(m.Concurrency)-1]))+")")
	}
	if len(prefill) > 0 {
		labels := make([]string, len(prefill))
		for i := range prefill {
			labels[i] = prefill[i].Context
		}
		parts = append(parts, "prefill at "+strings.Join(labels, ", "))
	}
	return strings.Join(parts, " · ")
}

func span(first, last string) string {
	if first == last {
		return first
	}
	return first + "–" + last
}

// subtitle names the model and the hardware: "GLM-5.3-Flash-NVFP4 on H200 NVL 141GB ×2".
func subtitle(f *results.File) string {
	model := f.Run.ServedModel
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	h := &f.Hardware
	hw := h.GPU
	if hw != "" && h.VRAMPerGPUGB > 0 {
		hw += " " + gb(h.VRAMPerGPUGB) + "GB"
	}
	if hw != "" && h.GPUCount > 1 {
		hw += " ×" + strconv.Itoa(h.GPUCount)
	}
	if model != "" && hw != "" {
		return model + " on " + hw
	}
	return model + hw
}

// gb formats gigabytes without needless decimals ("141", "80.5").
func gb(v float64) string { return numfmt.Plain(v) }

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// kvs builds a key-value list, leaving out empty values.
type kvs []results.KV

func (l *kvs) add(key, value string) {
	if value != "" {
		*l = append(*l, results.KV{Key: key, Value: value})
	}
}

func hardwareKV(h *results.Hardware) []results.KV {
	var l kvs
	l.add("Type", h.Type)
	l.add("GPU", h.GPU)
	if h.GPUCount > 0 {
		l.add("GPU count", strconv.Itoa(h.GPUCount))
	}
	if h.VRAMPerGPUGB > 0 {
		if h.GPUCount > 1 {
			l.add("VRAM", gb(h.VRAMPerGPUGB*float64(h.GPUCount))+" GB ("+strconv.Itoa(h.GPUCount)+" × "+gb(h.VRAMPerGPUGB)+" GB)")
		} else {
			l.add("VRAM", gb(h.VRAMPerGPUGB)+" GB")
		}
	}
	l.add("Driver", h.Driver)
	l.add("Clocks", h.Clocks)
	l.add("OS", h.OS)
	return append(l, h.Extra...)
}

func engineKV(e *results.Engine) []results.KV {
	var l kvs
	l.add("Engine", e.Name)
	l.add("Version", e.Version)
	l.add("Quantization", e.Quantization)
	l.add("Backend", e.Backend)
	l.add("Repository", e.Repository)
	l.add("Build", e.Build)
	l.add("Commit", e.Commit)
	return append(l, e.Extra...)
}

func runKV(r *results.Run) []results.KV {
	var l kvs
	l.add("Served model", r.ServedModel)
	l.add("Revision", r.Revision)
	l.add("Benchmark tool", joinNonEmpty(" ", r.Tool.Name, r.Tool.Version))
	l.add("Decode test", results.ModeDisplay(r.DecodeTest))
	l.add("Prefill mode", results.ModeDisplay(r.PrefillMode))
	if r.SecondsPerMeasurement > 0 {
		l.add("Time per measurement", numfmt.Plain(r.SecondsPerMeasurement)+" s")
	}
	if r.MaxOutputTokens > 0 {
		l.add("Max output", numfmt.FormatInt(r.MaxOutputTokens)+" tokens")
	}
	if !r.Start.IsZero() {
		l.add("Started", r.Start.UTC().Format(time.RFC3339))
	}
	if !r.End.IsZero() {
		l.add("Finished", r.End.UTC().Format(time.RFC3339))
	}
	return append(l, r.Extra...)
}
