package results

import (
	"fmt"
	"strconv"
	"strings"
)

// Phase names the two kinds of cell.
type Phase string

// The phases of the matrix.
const (
	PhasePrefill Phase = "prefill"
	PhaseDecode  Phase = "decode"
)

// CellID identifies a cell across runs: the phase, the context label and, for decode, the
// concurrency. Its text form is "prefill/8K" or "decode/8K/32".
type CellID struct {
	Phase        Phase
	ContextLabel string
	Concurrency  int // 0 for prefill
}

// String returns the text form that ParseCellID reads.
func (id CellID) String() string {
	if id.Phase == PhasePrefill {
		return "prefill/" + id.ContextLabel
	}
	return fmt.Sprintf("decode/%s/%d", id.ContextLabel, id.Concurrency)
}

// ParseCellID reads "prefill/8K" or "decode/8K/32" (also "8K/32" for a decode cell).
func ParseCellID(s string) (CellID, error) {
	parts := strings.Split(strings.TrimSpace(s), "/")
	bad := func(why string) (CellID, error) {
		return CellID{}, fmt.Errorf("cell %q: %s (want prefill/CTX or decode/CTX/CONCURRENCY, e.g. prefill/8K or decode/8K/32)", s, why)
	}
	if len(parts) == 2 && parts[0] == string(PhaseDecode) {
		ctx := strings.ToUpper(strings.TrimSpace(parts[1]))
		return bad(fmt.Sprintf("a decode cell needs its concurrency: decode/%s/C, e.g. decode/%s/32", ctx, ctx))
	}
	if len(parts) == 2 && parts[0] != string(PhasePrefill) {
		parts = append([]string{string(PhaseDecode)}, parts...) // 8K/32
	}
	if len(parts) >= 2 {
		// Context labels are written with a capital suffix (8K, 1024K): "8k" names that cell.
		parts[1] = strings.ToUpper(strings.TrimSpace(parts[1]))
	}
	switch {
	case len(parts) == 2 && parts[0] == string(PhasePrefill):
		if _, err := ParseContext(parts[1]); err != nil {
			return bad(err.Error())
		}
		return CellID{Phase: PhasePrefill, ContextLabel: parts[1]}, nil
	case len(parts) == 3 && parts[0] == string(PhaseDecode):
		if _, err := ParseContext(parts[1]); err != nil {
			return bad(err.Error())
		}
		c, err := strconv.Atoi(parts[2])
		if err != nil || c < 1 {
			return bad("concurrency must be a positive integer")
		}
		return CellID{Phase: PhaseDecode, ContextLabel: parts[1], Concurrency: c}, nil
	}
	return bad("unknown form")
}

// ID returns the cell's identity.
func (c *PrefillCell) ID() CellID {
	return CellID{Phase: PhasePrefill, ContextLabel: c.ContextLabel}
}

// ID returns the cell's identity.
func (c *DecodeCell) ID() CellID {
	return CellID{Phase: PhaseDecode, ContextLabel: c.ContextLabel, Concurrency: c.Concurrency}
}

// ParseCells reads a list of cells as ParseCellID does each, stopping at the first that is not
// a cell.
func ParseCells(list []string) ([]CellID, error) {
	ids := make([]CellID, 0, len(list))
	for _, s := range list {
		id, err := ParseCellID(s)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// FindPrefill returns f's prefill cell id, nil when f has none (a valid file holds each cell
// once).
func (f *File) FindPrefill(id CellID) *PrefillCell {
	return find(f.Prefill, func(c *PrefillCell) bool { return c.ID() == id })
}

// FindDecode returns f's decode cell id, nil when f has none.
func (f *File) FindDecode(id CellID) *DecodeCell {
	return find(f.Decode, func(c *DecodeCell) bool { return c.ID() == id })
}

// Value returns the cell's summary of metric m: prompt tok/s or TTFT, nil for any other metric
// or where the cell has none.
func (c *PrefillCell) Value(m Metric) *float64 {
	switch m {
	case MetricPromptTokPerS:
		return c.PromptTokPerS
	case MetricTTFT:
		return c.TTFTMs
	}
	return nil
}

// Value returns the summary of metric m: total or per-request tok/s, TTFT or time between
// tokens, nil for any other metric (acceptance is the spec-decode record's) or where d has none.
func (d *DecodeMetrics) Value(m Metric) *float64 {
	switch m {
	case MetricTotalTokPerS:
		return d.TotalTokPerS
	case MetricPerRequestTokPerS:
		return d.PerRequestTokPerS
	case MetricTTFT:
		return d.TTFTMs
	case MetricTBT:
		return d.TBTMs
	}
	return nil
}

// ContextLabel returns the label of a context length: whole multiples of K = 1024 tokens,
// rounded down ("1019K" for 1,044,416 tokens), or the plain number below 1K.
func ContextLabel(tokens int) string {
	if tokens < 1024 {
		return strconv.Itoa(tokens)
	}
	return strconv.Itoa(tokens/1024) + "K"
}

// ParseContext reads a context length: "8K" (8192 tokens), "1M" (1024K), or a plain number of
// tokens.
func ParseContext(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	switch {
	case strings.HasSuffix(t, "K") || strings.HasSuffix(t, "k"):
		mult, t = 1024, t[:len(t)-1]
	case strings.HasSuffix(t, "M") || strings.HasSuffix(t, "m"):
		mult, t = 1024*1024, t[:len(t)-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("context %q is not a length like 8K, 1M or 4096", s)
	}
	return n * mult, nil
}
