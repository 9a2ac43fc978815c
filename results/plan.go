package results

import (
	"cmp"
	"slices"
)

// The runner's trimming rule (package bench), mirrored so that a file's plan can be read back
// with the labels its cells get: a decode context that does not fit max_model_len with
// max_tokens is trimmed to max_model_len − max_tokens − planTrimMargin when that loses at most
// planMaxTrimLoss of it, and kept at its nominal label (and skipped) otherwise.
const (
	planTrimMargin  = 64
	planMaxTrimLoss = 0.10
)

// PlannedCells returns the cells the run's settings planned, with the labels the runner gives
// them (a decode context trimmed to fit max_model_len has the trimmed label, "1019K" for 1024K
// on a 1M server): the prefill cells, then the decode cells, each by context and concurrency.
// It is nil when the settings do not record a plan (imports, and files without settings).
func (f *File) PlannedCells() []CellID {
	s := f.Run.Settings
	if s == nil {
		return nil
	}
	maxTokens := s.MaxTokens
	if maxTokens == 0 {
		maxTokens = f.Run.MaxOutputTokens
	}
	maxModelLen := 0
	if f.Server != nil {
		maxModelLen = f.Server.MaxModelLen
	}
	decodeLabel := func(label string) (string, bool) {
		n, err := ParseContext(label)
		if err != nil {
			return "", false
		}
		if maxModelLen > 0 && n+maxTokens+planTrimMargin > maxModelLen {
			if t := maxModelLen - maxTokens - planTrimMargin; t > 0 && float64(t) >= (1-planMaxTrimLoss)*float64(n) {
				return ContextLabel(t), true
			}
		}
		return ContextLabel(n), true
	}
	prefillLabel := func(label string) (string, bool) {
		n, err := ParseContext(label)
		if err != nil {
			return "", false
		}
		return ContextLabel(n), true
	}
	var out []CellID
	add := func(id CellID) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(s.Cells) > 0 {
		for _, c := range s.Cells {
			id, err := ParseCellID(c)
			if err != nil {
				continue
			}
			var ok bool
			if id.Phase == PhasePrefill {
				id.ContextLabel, ok = prefillLabel(id.ContextLabel)
			} else {
				id.ContextLabel, ok = decodeLabel(id.ContextLabel)
			}
			if ok {
				add(id)
			}
		}
	} else {
		for _, l := range s.PrefillContexts {
			if label, ok := prefillLabel(l); ok {
				add(CellID{Phase: PhasePrefill, ContextLabel: label})
			}
		}
		for _, l := range s.Contexts {
			label, ok := decodeLabel(l)
			if !ok {
				continue
			}
			for _, c := range s.Concurrency {
				if c >= 1 {
					add(CellID{Phase: PhaseDecode, ContextLabel: label, Concurrency: c})
				}
			}
		}
	}
	tokens := func(label string) int { n, _ := ParseContext(label); return n }
	slices.SortStableFunc(out, func(a, b CellID) int {
		return cmp.Or(cmp.Compare(phaseOrder(a.Phase), phaseOrder(b.Phase)), cmp.Compare(tokens(a.ContextLabel), tokens(b.ContextLabel)), cmp.Compare(a.Concurrency, b.Concurrency))
	})
	return out
}

// Done returns how many prefill and decode cells f records an outcome for: every cell but
// those recorded with an error (the cell a dying server took with it). The messages about a
// partial run count these: compare's "stopped after N of M cells" and run's "the N cells
// measured so far".
func (f *File) Done() (prefill, decode int) {
	for i := range f.Prefill {
		if f.Prefill[i].Status != StatusError {
			prefill++
		}
	}
	for i := range f.Decode {
		if f.Decode[i].Status != StatusError {
			decode++
		}
	}
	return prefill, decode
}

// NotMeasured returns the planned cells that the file holds no cell for: those a partial run did
// not reach.
func (f *File) NotMeasured() []CellID {
	have := map[CellID]bool{}
	for i := range f.Prefill {
		have[f.Prefill[i].ID()] = true
	}
	for i := range f.Decode {
		have[f.Decode[i].ID()] = true
	}
	var out []CellID
	for _, id := range f.PlannedCells() {
		if !have[id] {
			out = append(out, id)
		}
	}
	return out
}

func phaseOrder(p Phase) int {
	if p == PhasePrefill {
		return 0
	}
	return 1
}
