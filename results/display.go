package results

import (
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/numfmt"
)

// Display names shared by the report renderer and the importer, as the reference report prints
// them.
var (
	statusNames = []struct {
		s    Status
		name string
	}{
		{StatusValid, "Valid"},
		{StatusQueued, "Requests queued"},
		{StatusOverCapacity, "Over capacity"},
		{StatusError, "Error"},
		{StatusSkipped, "Skipped"},
	}
	modeNames = []struct{ code, name string }{
		{DecodeFixedDuration, "Fixed duration"},
		{PrefillDecodeWarmup, "Measured during decode warm-up"},
	}
)

// NotMeasuredDisplay is what a page shows for a cell the run planned but did not reach (a
// partial run). It is no status: the importer reads such a row as no cell.
const NotMeasuredDisplay = "Not measured"

// NotMeasuredRow returns the "All measurements" row of a planned cell the run did not reach.
func NotMeasuredRow(id CellID) []string {
	row := make([]string, len(measurementColumns))
	for i := range row {
		row[i] = numfmt.Dash
	}
	row[0], row[1], row[2], row[3] = phaseDecodeDisplay, id.ContextLabel, strconv.Itoa(id.Concurrency), NotMeasuredDisplay
	if id.Phase == PhasePrefill {
		row[0], row[2] = phasePrefillDisplay, "1"
	}
	return row
}

// StatusDisplay returns the status as a report prints it ("Requests queued").
func StatusDisplay(s Status) string {
	for _, n := range statusNames {
		if n.s == s {
			return n.name
		}
	}
	return string(s)
}

// ParseStatusDisplay reads a status as a report prints it; ok is false for an unknown one.
func ParseStatusDisplay(name string) (Status, bool) {
	for _, n := range statusNames {
		if strings.EqualFold(n.name, strings.TrimSpace(name)) {
			return n.s, true
		}
	}
	return "", false
}

// ModeDisplay returns a decode test mode or prefill mode as a report prints it; a mode this
// version does not know is returned as it is.
func ModeDisplay(code string) string {
	for _, m := range modeNames {
		if m.code == code {
			return m.name
		}
	}
	return code
}

// ParseModeDisplay maps a printed mode back to its code; unknown text is kept verbatim.
func ParseModeDisplay(name string) string {
	for _, m := range modeNames {
		if strings.EqualFold(m.name, strings.TrimSpace(name)) {
			return m.code
		}
	}
	return strings.TrimSpace(name)
}

// MeasurementColumns are the columns of the "All measurements" table, in the reference's order.
var measurementColumns = []string{
	"Phase", "Context", "Requests at once", "Status", "Total tok/s", "Per request tok/s", "TTFT",
	"Time between tokens", "Average active requests", "Completed requests", "Output tokens", "Measured for",
}

// MeasurementColumns returns the header of the "All measurements" table.
func MeasurementColumns() []string { return append([]string(nil), measurementColumns...) }

// Phase names as the "All measurements" table prints them.
const (
	phasePrefillDisplay = "Prefill"
	phaseDecodeDisplay  = "Sustained decode"
)

// statusCell returns the Status column of a cell: the status, and for an error its reason.
func statusCell(s Status, reason string) string {
	if s == StatusError && reason != "" {
		return StatusDisplay(s) + ": " + reason
	}
	return StatusDisplay(s)
}

func fmtOpt(p *float64, f func(float64) string) string {
	if p == nil {
		return numfmt.Dash
	}
	return f(*p)
}

func fmtOptInt(p *int) string {
	if p == nil {
		return numfmt.Dash
	}
	return numfmt.FormatInt(*p)
}

// MeasurementRow returns the cell's row of the "All measurements" table, formatted exactly as
// the reference report prints it.
func (c *PrefillCell) MeasurementRow() []string {
	return []string{
		phasePrefillDisplay, c.ContextLabel, "1", statusCell(c.Status, c.Error),
		fmtOpt(c.PromptTokPerS, numfmt.FormatTokPerS), numfmt.Dash, fmtOpt(c.TTFTMs, numfmt.FormatTTFT),
		numfmt.Dash, numfmt.Dash, fmtOptInt(c.CompletedRequests), numfmt.Dash, numfmt.Dash,
	}
}

// MeasurementRow returns the cell's row of the "All measurements" table, formatted exactly as
// the reference report prints it.
func (c *DecodeCell) MeasurementRow() []string {
	m := &c.DecodeMetrics
	return []string{
		phaseDecodeDisplay, c.ContextLabel, strconv.Itoa(c.Concurrency), statusCell(c.Status, c.Error),
		fmtOpt(m.TotalTokPerS, numfmt.FormatTokPerS), fmtOpt(m.PerRequestTokPerS, numfmt.FormatTokPerS),
		fmtOpt(m.TTFTMs, numfmt.FormatTTFT), fmtOpt(m.TBTMs, numfmt.FormatTBT),
		fmtOpt(m.AvgActiveRequests, numfmt.FormatOne), fmtOptInt(m.CompletedRequests),
		fmtOptInt(m.OutputTokens), fmtOpt(m.MeasuredSeconds, numfmt.FormatSeconds),
	}
}

// ListText returns the cell's entry in the prefill list: prompt tok/s and TTFT, or its status
// and a dash when it was not measured.
func (c *PrefillCell) ListText() (rate, ttft string) {
	if !c.Status.Measured() {
		return StatusDisplay(c.Status), numfmt.Dash
	}
	return fmtOpt(c.PromptTokPerS, numfmt.FormatTokPerSShort), fmtOpt(c.TTFTMs, numfmt.FormatTTFT)
}

// MatrixText returns the lines of the cell in the sustained-decode matrix: total tok/s, the
// status when it is not Valid, and TTFT ("865.7", "Requests queued", "8,671 ms TTFT"); a cell
// that was not measured shows only its status.
func (c *DecodeCell) MatrixText() []string {
	if !c.Status.Measured() {
		return []string{StatusDisplay(c.Status)}
	}
	lines := []string{fmtOpt(c.TotalTokPerS, numfmt.FormatTokPerS)}
	if c.Status != StatusValid {
		lines = append(lines, StatusDisplay(c.Status))
	}
	if c.TTFTMs != nil {
		lines = append(lines, numfmt.FormatTTFT(*c.TTFTMs)+" TTFT")
	}
	return lines
}

// FormatValue formats a value of m with its unit and at least three significant digits, so
// that a change of a few percent shows in the numbers: "153.9 tok/s", "12.0K tok/s", "0.700
// ms", "3.04 tokens/step". Comparisons and histories print values so.
func (m Metric) FormatValue(v float64) string {
	switch m {
	case MetricTTFT:
		return numfmt.FormatTTFTPrecise(v)
	case MetricTBT:
		return numfmt.FormatTBTPrecise(v)
	case MetricSpecAcceptance:
		return strconv.FormatFloat(v, 'f', 2, 64) + " tokens/step"
	}
	return numfmt.FormatTokPerSPrecise(v) + " tok/s"
}

// ShortCommit returns the first 12 characters of a commit id, as logs and messages name a
// commit (store list prints it so too); shorter strings are returned as they are.
func ShortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
