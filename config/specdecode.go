package config

import (
	"math"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Speculative-decoding modes of spec_decode.
const (
	SpecDecodeAsLaunched = "as_launched" // serve the command as given (the default)
	SpecDecodePinned     = "pinned"      // pin acceptance for the matrix, measure it in a separate pass
)

// SpecDecodeModes lists the modes spec_decode accepts.
var SpecDecodeModes = []string{SpecDecodeAsLaunched, SpecDecodePinned}

// SpecDecode is spec_decode: how speculative decoding is served for the matrix. Written as a
// mode ("pinned") or as a mapping ({mode: pinned, acceptance_length: 3.1, …}).
//
// Pinned serves engine.serve twice: first unpinned for a short acceptance pass (a few
// low-concurrency cells whose spec-decode counters give the acceptance, recorded and compared),
// then with acceptance pinned (vLLM's --speculative-config rejection_sample_method "synthetic"
// and synthetic_acceptance_length) for the whole matrix, so that its speed carries no
// acceptance noise.
type SpecDecode struct {
	// Mode is as_launched (default) or pinned.
	Mode string `yaml:"mode"`
	// AcceptanceLength is the synthetic_acceptance_length to pin (mean tokens per draft step,
	// counting the target's own token); 0: the mean the acceptance pass measured.
	AcceptanceLength float64 `yaml:"acceptance_length"`
	// AcceptanceContexts are the acceptance pass's decode contexts (default: the matrix's
	// smallest and largest decode context).
	AcceptanceContexts List `yaml:"acceptance_contexts"`
	// AcceptanceConcurrency is the pass's concurrency (default 1: acceptance varies most where
	// one request is measured at a time, and that is where a drop costs the most speed).
	AcceptanceConcurrency int `yaml:"acceptance_concurrency"`
	// AcceptanceTrials is how many windows the pass measures per cell (default 3, so that
	// compare has the cell's run-to-run spread instead of a prior).
	AcceptanceTrials int `yaml:"acceptance_trials"`
	// AcceptanceDuration is each window's length (default: the run's duration).
	AcceptanceDuration Duration `yaml:"acceptance_duration"`
}

// Pinned reports whether spec_decode is pinned.
func (s SpecDecode) Pinned() bool { return s.Mode == SpecDecodePinned }

// PassConcurrency returns the acceptance pass's concurrency (default 1).
func (s SpecDecode) PassConcurrency() int {
	if s.AcceptanceConcurrency > 0 {
		return s.AcceptanceConcurrency
	}
	return 1
}

// PassTrials returns the acceptance pass's windows per cell (default 3).
func (s SpecDecode) PassTrials() int {
	if s.AcceptanceTrials > 0 {
		return s.AcceptanceTrials
	}
	return 3
}

var specDecodeType = reflect.TypeFor[SpecDecode]()

// specDecode decodes spec_decode: a mode, or a mapping.
func (d *decoder) specDecode(n *yaml.Node, v reflect.Value, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		s := v.Interface().(SpecDecode)
		s.Mode = strings.TrimSpace(n.Value)
		v.Set(reflect.ValueOf(s))
	case yaml.MappingNode:
		d.structure(n, v, path)
	default:
		d.fail(n, path, "want %s or {mode: pinned, acceptance_length: L, …}, got %s", strings.Join(SpecDecodeModes, ", "), describe(n))
	}
}

// specDecode checks spec_decode.
func (v *validator) specDecode(r Run) {
	s := r.SpecDecode
	if s.Mode != "" && !contains(SpecDecodeModes, s.Mode) {
		v.fail("spec_decode", "%q: want %s", s.Mode, strings.Join(SpecDecodeModes, " or "))
	}
	if l := s.AcceptanceLength; l != 0 && (!(l >= 1) || math.IsInf(l, 0)) {
		v.fail("spec_decode.acceptance_length", "%g: want at least 1 (tokens per draft step, counting the target's own token), or 0 to pin what the acceptance pass measures", l)
	}
	v.contexts("spec_decode.acceptance_contexts", s.AcceptanceContexts)
	if s.AcceptanceConcurrency < 0 {
		v.fail("spec_decode.acceptance_concurrency", "%d: want 1 or more (0: the default, 1)", s.AcceptanceConcurrency)
	}
	if s.AcceptanceTrials < 0 {
		v.fail("spec_decode.acceptance_trials", "%d: want 1 or more (0: the default, 3)", s.AcceptanceTrials)
	}
	if s.AcceptanceDuration < 0 {
		v.fail("spec_decode.acceptance_duration", "%s: want a positive duration (0: the run's)", s.AcceptanceDuration)
	}
	if s.Pinned() && r.Engine.Serve == nil {
		v.fail("spec_decode", "pinned needs engine.serve: speedmatrix starts the server twice, unpinned for the acceptance pass and pinned for the matrix")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String returns the mode in effect.
func (s SpecDecode) String() string {
	if s.Mode == "" {
		return SpecDecodeAsLaunched
	}
	return s.Mode
}
