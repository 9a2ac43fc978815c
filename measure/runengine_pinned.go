package measure

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/results"
)

// runEnginePinned is `speedmatrix run` with spec_decode: pinned. Speculative decoding makes the
// low-concurrency cells' speed vary run to run with the acceptance rate (CV ≈ 10–20 % at
// concurrency 1–2 in vLLM, vllm-project/vllm issue 53436), which drowns kernel-speed changes;
// pinning acceptance removes that noise but would hide an acceptance regression. So it serves
// engine.serve twice:
//
//  1. The acceptance pass: the command as given (unpinned), a few cells (spec_decode's
//     acceptance_contexts, default the matrix's smallest and largest decode context, at
//     acceptance_concurrency, default 1), acceptance_trials windows each, no prefill cells. Its
//     cells' spec-decode telemetry is the measured acceptance, kept in OUTPUT.acceptance.json and
//     in the results' spec_decode.acceptance_pass, which compare compares (a drop is a
//     regression).
//  2. The matrix: the command with --speculative-config rewritten to pin acceptance
//     (engine.PinAcceptance) at acceptance_length, or, when that is 0, at the mean length the
//     pass measured; the results record spec_decode {mode, pinned_acceptance_length,
//     pinned_from, acceptance_pass}; a measured length is rounded to two decimals.
//
// A pass that measured no acceptance (no spec-decode counters) ends the run before the matrix
// unless acceptance_length is set. A run of no decode cell (a prefill-only rerun) has no pass and
// needs acceptance_length. A rerun's --trials N applies to the pass when above its trials.
func runEnginePinned(ctx context.Context, env *Deps, o session) error {
	if o.URL != "" || o.Engine.Serve == nil {
		return settingsf("spec_decode: pinned needs engine.serve and no --url: speedmatrix starts the server twice, unpinned for the acceptance pass and pinned for the matrix")
	}
	pass, err := acceptancePassOptions(o)
	if err != nil {
		return err
	}
	var cells []results.DecodeCell
	if len(pass.Contexts) > 0 {
		env.Log.Info("spec_decode pinned: measuring acceptance unpinned first", "contexts", []string(pass.Contexts), "concurrency", []string(pass.Concurrency), "trials", pass.Trials, "output", pass.Output)
		if err := runEngine(ctx, env, pass); err != nil {
			return fmt.Errorf("spec_decode: pinned: the acceptance pass: %w", err)
		}
		pf, err := results.ReadFile(pass.Output)
		if err != nil {
			return fmt.Errorf("spec_decode: pinned: reading the acceptance pass: %w", err)
		}
		cells = measuredAcceptance(pf)
	} else {
		env.Log.Info("spec_decode pinned: no decode cell to measure, so no acceptance pass")
	}
	l, from := o.SpecDecode.AcceptanceLength, results.PinnedFromConfig
	if l == 0 {
		m, ok := meanAcceptance(cells)
		if !ok {
			if len(pass.Contexts) == 0 {
				return settingsf("spec_decode: pinned: the run measures no decode cell, so there is no acceptance pass to pin at; set spec_decode.acceptance_length")
			}
			return fmt.Errorf("spec_decode: pinned: the acceptance pass measured no speculative acceptance (the server exported no spec-decode counters, or serves without speculative decoding); set spec_decode.acceptance_length to pin a known length, or serve as_launched")
		}
		l, from = math.Round(m*100)/100, results.PinnedFromAcceptance // two decimals: a readable command
	}
	serve := *o.Engine.Serve
	if serve.Command, err = engine.PinAcceptance(serve.Command, l); err != nil {
		return settingsf("spec_decode: pinned: engine.serve.command: %v", err)
	}
	main := o
	main.Engine.Serve = &serve
	rec := &results.SpecDecode{Mode: results.SpecDecodePinned, PinnedAcceptanceLength: l, PinnedFrom: from, AcceptancePass: cells}
	main.finish = chainFinish(o.finish, func(f *results.File) { f.SpecDecode = rec })
	env.Log.Info("spec_decode pinned: measuring the matrix with acceptance pinned", "acceptance_length", l, "from", from)
	return runEngine(ctx, env, main)
}

// acceptancePassOptions returns the options of the acceptance pass: the command unpinned, the
// pass's cells only, its own output file next to the results.
func acceptancePassOptions(o session) (session, error) {
	sd := o.SpecDecode
	p := o
	p.SpecDecode = config.SpecDecode{}
	p.finish = nil
	p.Output = o.Output + ".acceptance.json"
	p.Cells = nil
	p.Concurrency = config.List{fmt.Sprint(sd.PassConcurrency())}
	p.PrefillContexts = config.List{"none"}
	p.Trials = max(sd.PassTrials(), o.Trials) // a rerun's --trials N counts for the pass too
	if sd.AcceptanceDuration > 0 {
		p.Duration = sd.AcceptanceDuration
	}
	p.Contexts = sd.AcceptanceContexts
	if len(p.Contexts) == 0 {
		ctxs, err := decodeContexts(o)
		if err != nil {
			return p, err
		}
		if len(ctxs) == 0 {
			return p, nil // nothing decodes: no pass (a prefill-only rerun)
		}
		p.Contexts = config.List{results.ContextLabel(slices.Min(ctxs))}
		if hi := slices.Max(ctxs); hi != slices.Min(ctxs) {
			p.Contexts = append(p.Contexts, results.ContextLabel(hi))
		}
	}
	return p, nil
}

// decodeContexts returns the decode contexts the run's matrix (or its cells) measures.
func decodeContexts(o session) ([]int, error) {
	cfg, err := benchConfig(o, "http://127.0.0.1:1", "acceptance-pass")
	if err != nil {
		return nil, err
	}
	if len(cfg.Cells) > 0 {
		var out []int
		for _, id := range cfg.Cells {
			if id.Phase == results.PhaseDecode {
				n, err := results.ParseContext(id.ContextLabel)
				if err == nil {
					out = append(out, n)
				}
			}
		}
		return out, nil
	}
	return cfg.Matrix.Contexts, nil
}

// measuredAcceptance returns the pass's measured decode cells.
func measuredAcceptance(f *results.File) []results.DecodeCell {
	var out []results.DecodeCell
	for _, c := range f.Decode {
		if c.Status.Measured() {
			out = append(out, c)
		}
	}
	return out
}

// meanAcceptance returns the mean acceptance length of the cells that measured one.
func meanAcceptance(cells []results.DecodeCell) (float64, bool) {
	var sum float64
	n := 0
	for _, c := range cells {
		if c.Telemetry != nil && c.Telemetry.SpecAcceptanceLength != nil && *c.Telemetry.SpecAcceptanceLength >= 1 {
			sum += *c.Telemetry.SpecAcceptanceLength
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
