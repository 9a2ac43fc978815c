package results

import "fmt"

// Speculative-decoding modes of SpecDecode.Mode and where a pinned length came from.
const (
	SpecDecodePinned     = "pinned"
	PinnedFromConfig     = "config"
	PinnedFromAcceptance = "acceptance_pass"
)

// SpecDecode records a run whose matrix was served with speculative acceptance pinned (vLLM's
// synthetic rejection sampling): the matrix's own spec-decode telemetry then shows the pinned
// length, not a measurement, and the acceptance measured by a short separate pass served
// without pinning stands for it.
type SpecDecode struct {
	// Mode is SpecDecodePinned.
	Mode string `json:"mode"`
	// PinnedAcceptanceLength is the synthetic_acceptance_length the matrix was served with.
	PinnedAcceptanceLength float64 `json:"pinned_acceptance_length,omitempty"`
	// PinnedFrom says where it came from: PinnedFromConfig or PinnedFromAcceptance (the mean
	// of the acceptance pass).
	PinnedFrom string `json:"pinned_from,omitempty"`
	// AcceptancePass holds the decode cells of the unpinned pass (a few low-concurrency cells,
	// their telemetry carrying the measured acceptance).
	AcceptancePass []DecodeCell `json:"acceptance_pass,omitempty"`
}

// Pinned reports whether f's matrix was served with pinned acceptance.
func (f *File) Pinned() bool {
	return f.SpecDecode != nil && f.SpecDecode.Mode == SpecDecodePinned
}

// AcceptanceCell returns the measured decode cell whose telemetry holds the speculative
// acceptance of cell id: in a pinned run the acceptance pass's cell (the matrix's own shows
// only the pinned length), else the matrix's. It is nil when there is none.
func (f *File) AcceptanceCell(id CellID) *DecodeCell {
	cells := f.Decode
	if f.Pinned() {
		cells = f.SpecDecode.AcceptancePass
	}
	return find(cells, func(c *DecodeCell) bool { return c.ID() == id && c.Status.Measured() })
}

// specDecode checks the spec_decode record: a known mode, a plausible pinned length, and cells
// that pass the same checks as the matrix's, each once.
func (v *validator) specDecode(s *SpecDecode) {
	if s == nil {
		return
	}
	if s.Mode != SpecDecodePinned {
		v.addf("spec_decode.mode %q: want %q", s.Mode, SpecDecodePinned)
	}
	if s.PinnedAcceptanceLength != 0 {
		v.value("spec_decode", "pinned_acceptance_length", s.PinnedAcceptanceLength)
		if s.PinnedAcceptanceLength < 1 {
			v.addf("spec_decode.pinned_acceptance_length %g: below 1 (it counts the target's own token)", s.PinnedAcceptanceLength)
		}
	}
	switch s.PinnedFrom {
	case "", PinnedFromConfig, PinnedFromAcceptance:
	default:
		v.addf("spec_decode.pinned_from %q: want %q or %q", s.PinnedFrom, PinnedFromConfig, PinnedFromAcceptance)
	}
	seen := map[CellID]int{}
	for i := range s.AcceptancePass {
		c := &s.AcceptancePass[i]
		where := fmt.Sprintf("acceptance pass cell %s×%d (spec_decode.acceptance_pass[%d])", c.ContextLabel, c.Concurrency, i)
		v.cellIdentity(where, c.Context, c.ContextLabel, c.Concurrency)
		if j, dup := seen[c.ID()]; dup {
			v.addf("%s: duplicate of acceptance_pass[%d]", where, j)
		}
		seen[c.ID()] = i
		v.decode(where, c)
	}
}
