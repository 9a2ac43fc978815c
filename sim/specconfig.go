package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/speedmatrix/speedmatrix/sim/engine"
)

// SpecConfig is what the simulator reads of vLLM's --speculative-config JSON (vLLM's
// SpeculativeConfig, https://docs.vllm.ai/en/latest/api/vllm/config/speculative.html): whether
// acceptance is pinned (rejection_sample_method "synthetic" with synthetic_acceptance_length,
// the mean tokens per draft step counting the target's own token). Other keys (method, model,
// num_speculative_tokens, …) are accepted and ignored: the profile says how many tokens are
// drafted and how often they are accepted.
type SpecConfig struct {
	// PinnedAcceptanceLength is synthetic_acceptance_length when rejection_sample_method is
	// "synthetic", else 0.
	PinnedAcceptanceLength float64
}

// ParseSpecConfig reads a --speculative-config value; empty means none.
func ParseSpecConfig(s string) (SpecConfig, error) {
	if strings.TrimSpace(s) == "" {
		return SpecConfig{}, nil
	}
	var raw struct {
		Method string   `json:"rejection_sample_method"`
		Length *float64 `json:"synthetic_acceptance_length"`
		Rates  []any    `json:"synthetic_acceptance_rates"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return SpecConfig{}, fmt.Errorf("--speculative-config: %v; give a JSON object such as {\"rejection_sample_method\":\"synthetic\",\"synthetic_acceptance_length\":3.1}", err)
	}
	switch raw.Method {
	case "", "standard", "block":
		return SpecConfig{}, nil
	case "synthetic":
	default:
		return SpecConfig{}, fmt.Errorf("--speculative-config: rejection_sample_method %q is not one of standard, synthetic, block", raw.Method)
	}
	if raw.Length == nil {
		if len(raw.Rates) > 0 {
			return SpecConfig{}, fmt.Errorf("--speculative-config: the simulator pins acceptance by synthetic_acceptance_length only; give that instead of synthetic_acceptance_rates")
		}
		return SpecConfig{}, fmt.Errorf("--speculative-config: rejection_sample_method synthetic needs synthetic_acceptance_length")
	}
	if l := *raw.Length; !(l >= 1) || math.IsInf(l, 0) {
		return SpecConfig{}, fmt.Errorf("--speculative-config: synthetic_acceptance_length %g must be at least 1 (it counts the target's own token)", l)
	}
	return SpecConfig{PinnedAcceptanceLength: *raw.Length}, nil
}

// pinAcceptance applies a --speculative-config value to the engine's configuration.
func pinAcceptance(ecfg *engine.Config, spec string) error {
	sc, err := ParseSpecConfig(spec)
	if err != nil {
		return err
	}
	if sc.PinnedAcceptanceLength == 0 {
		return nil
	}
	if ecfg.NumSpecTokens == 0 {
		return fmt.Errorf("--speculative-config pins acceptance, but the profile has no speculative decoding (num_speculative_tokens 0)")
	}
	ecfg.PinnedAcceptanceLength = sc.PinnedAcceptanceLength
	return ecfg.Validate()
}
