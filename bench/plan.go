package bench

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/speedmatrix/speedmatrix/results"
)

// trimMargin is the headroom, in tokens, that a trimmed context leaves below max_model_len
// besides max_tokens (chat templates and special tokens), as the reference tool does.
const trimMargin = 64

// maxTrimLoss is the largest fraction of the nominal length trimming may lose.
const maxTrimLoss = 0.10

// ctxPlan is one prompt length of the plan: its scout, its prefill cell and its decode cells.
type ctxPlan struct {
	Tokens  int    // prompt length sent
	Context int    // the context the label names (Tokens, or the nominal of a capped prefill)
	Label   string // results.ContextLabel(Context)
	Nominal int    // what was asked for
	// Prefill records the scout request as a prefill cell.
	Prefill bool
	// Decode lists the concurrency levels to measure; OverCap those skipped as over capacity.
	Decode  []int
	OverCap []int
	// Skip says why this context cannot be measured at all ("" when it can).
	Skip string
}

// planInput is what a plan is made from.
type planInput struct {
	Matrix Matrix
	// PrefillFromDecode records every decode context's scout as a prefill cell, and measures
	// a trimmed one also at its full length (the full and quick matrices).
	PrefillFromDecode bool
	Cells             []results.CellID // when set, they replace the matrix
	MaxModelLen       int              // 0: unknown, nothing is trimmed
	MaxTokens         int
	KVCacheTokens     int // 0: unknown, nothing is over capacity
}

// decodeLength returns the prompt length of a decode context of nominal tokens: nominal when
// nominal + max_tokens + 64 fits max_model_len, else max_model_len − max_tokens − 64 when that
// loses at most 10 % of nominal; skip says why it cannot be measured otherwise.
func decodeLength(nominal, maxModelLen, maxTokens int) (tokens int, skip string) {
	if maxModelLen <= 0 || nominal+maxTokens+trimMargin <= maxModelLen {
		return nominal, ""
	}
	t := maxModelLen - maxTokens - trimMargin
	if t > 0 && float64(t) >= (1-maxTrimLoss)*float64(nominal) {
		return t, ""
	}
	return 0, fmt.Sprintf("context %s does not fit max_model_len %d with max_tokens %d (trimming would lose more than %.0f %%)",
		results.ContextLabel(nominal), maxModelLen, maxTokens, maxTrimLoss*100)
}

// prefillLength returns the prompt length of a prefill measurement at its full nominal length:
// nominal, capped at max_model_len − 1 (one output token) when the cap loses at most 10 %.
func prefillLength(nominal, maxModelLen int) (tokens int, skip string) {
	if maxModelLen <= 0 || nominal+1 <= maxModelLen {
		return nominal, ""
	}
	t := maxModelLen - 1
	if t > 0 && float64(t) >= (1-maxTrimLoss)*float64(nominal) {
		return t, ""
	}
	return 0, fmt.Sprintf("prefill context %s does not fit max_model_len %d", results.ContextLabel(nominal), maxModelLen)
}

// buildPlan resolves the matrix (or the cells) against the server's limits. It returns the
// contexts in ascending order of length and notes on what was changed.
func buildPlan(in planInput) ([]*ctxPlan, []string) {
	var notes []string
	byKey := map[string]*ctxPlan{}
	get := func(tokens, context, nominal int, skip string) *ctxPlan {
		label := results.ContextLabel(context)
		key := fmt.Sprintf("%d/%s/%s", tokens, label, skip)
		if p, ok := byKey[key]; ok {
			return p
		}
		p := &ctxPlan{Tokens: tokens, Context: context, Label: label, Nominal: nominal, Skip: skip}
		byKey[key] = p
		return p
	}
	addDecode := func(nominal int, levels []int) *ctxPlan {
		tokens, skip := decodeLength(nominal, in.MaxModelLen, in.MaxTokens)
		if skip != "" {
			p := get(0, nominal, nominal, skip)
			p.Decode = append(p.Decode, levels...)
			return p
		}
		p := get(tokens, tokens, nominal, "")
		p.Decode = append(p.Decode, levels...)
		return p
	}
	addPrefill := func(nominal int) {
		tokens, skip := prefillLength(nominal, in.MaxModelLen)
		p := get(tokens, nominal, nominal, skip)
		p.Prefill = true
	}

	if len(in.Cells) > 0 {
		for _, id := range in.Cells {
			n, err := results.ParseContext(id.ContextLabel)
			if err != nil { // ParseCellID checked it; keep the plan total anyway
				continue
			}
			switch id.Phase {
			case results.PhasePrefill:
				addPrefill(n)
			default:
				p := addDecode(n, []int{id.Concurrency})
				if p.Skip == "" && p.Label != id.ContextLabel {
					notes = append(notes, fmt.Sprintf("cell %s was measured as decode/%s/%d: the context was trimmed to fit max_model_len %d",
						id, p.Label, id.Concurrency, in.MaxModelLen))
				}
			}
		}
	} else {
		for _, n := range in.Matrix.Contexts {
			p := addDecode(n, in.Matrix.Concurrency)
			if in.PrefillFromDecode {
				if p.Skip == "" {
					p.Prefill = true
				}
				if p.Skip != "" || p.Tokens != n {
					addPrefill(n)
				}
			}
		}
		for _, n := range in.Matrix.PrefillContexts {
			addPrefill(n)
		}
	}

	var out []*ctxPlan
	for _, p := range byKey {
		slices.Sort(p.Decode)
		p.Decode = slices.Compact(p.Decode)
		if p.Skip == "" && in.KVCacheTokens > 0 {
			var fit []int
			for _, c := range p.Decode {
				if c*(p.Tokens+in.MaxTokens) > in.KVCacheTokens {
					p.OverCap = append(p.OverCap, c)
				} else {
					fit = append(fit, c)
				}
			}
			p.Decode = fit
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *ctxPlan) int {
		return cmp.Or(cmp.Compare(a.Context, b.Context), cmp.Compare(a.Tokens, b.Tokens), cmp.Compare(a.Skip, b.Skip))
	})
	for _, p := range out {
		switch {
		case p.Skip != "" || p.Tokens == p.Nominal:
		case p.Context == p.Tokens:
			notes = append(notes, fmt.Sprintf("context %s was trimmed to %d tokens (%s) to fit max_model_len %d with max_tokens %d",
				results.ContextLabel(p.Nominal), p.Tokens, p.Label, in.MaxModelLen, in.MaxTokens))
		default:
			notes = append(notes, fmt.Sprintf("prefill %s was measured with %d prompt tokens (max_model_len %d − 1)",
				p.Label, p.Tokens, in.MaxModelLen))
		}
	}
	return out, notes
}

// plannedCells lists the cells of a plan in the order they are measured.
func plannedCells(plan []*ctxPlan, trials int) []PlannedCell {
	var out []PlannedCell
	for _, p := range plan {
		if p.Skip != "" {
			continue
		}
		if p.Prefill {
			out = append(out, PlannedCell{ID: results.CellID{Phase: results.PhasePrefill, ContextLabel: p.Label}, Trials: trials})
		}
		for _, c := range p.Decode {
			out = append(out, PlannedCell{ID: results.CellID{Phase: results.PhaseDecode, ContextLabel: p.Label, Concurrency: c}, Trials: trials})
		}
	}
	return out
}
