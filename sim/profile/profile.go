package profile

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/speedmatrix/speedmatrix/sim/engine"
)

// Default is the name of the profile used when none is given: the one calibrated to the
// reference report.
const Default = "glm-5.3-flash-nvfp4-h200x2"

//go:embed profiles/*.yaml
var embedded embed.FS

// Profile is one performance profile.
type Profile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// ServedModel is the model name the simulator serves (vLLM --served-model-name).
	ServedModel string `yaml:"served_model"`
	// EngineVersion is what /version reports.
	EngineVersion string `yaml:"engine_version,omitempty"`
	MaxModelLen   int    `yaml:"max_model_len"`
	MaxNumSeqs    int    `yaml:"max_num_seqs"`
	// MaxRunning is a ceiling on concurrently running requests below max_num_seqs that the
	// modelled server showed; 0 for none. See sim/PROFILES.md.
	MaxRunning          int        `yaml:"max_running,omitempty"`
	MaxNumBatchedTokens int        `yaml:"max_num_batched_tokens"`
	KVCache             KVCache    `yaml:"kv_cache"`
	Prefill             Prefill    `yaml:"prefill"`
	Decode              Decode     `yaml:"decode"`
	Frontend            Frontend   `yaml:"frontend"`
	SpecDecode          SpecDecode `yaml:"spec_decode"`
	Output              Output     `yaml:"output,omitempty"`
	Noise               Noise      `yaml:"noise,omitempty"`
	// Fit records where the numbers came from when the profile was fitted.
	Fit *FitInfo `yaml:"fit,omitempty"`
}

// KVCache is the paged KV cache (vLLM's cache_config).
type KVCache struct {
	BlockSize    int    `yaml:"block_size"`
	NumGPUBlocks int    `yaml:"num_gpu_blocks"`
	Dtype        string `yaml:"dtype,omitempty"`
}

// Prefill is the prefill speed: the rate at which a prompt of each length is prefilled alone
// (compute only, without the frontend's time), interpolated between points.
type Prefill struct {
	Points []PrefillPoint `yaml:"points"`
	// USPerCachedToken is the engine's time to take up a prompt prefix found in the prefix
	// cache, per cached token, paid when the request is admitted (it then counts as running).
	USPerCachedToken float64 `yaml:"us_per_cached_token,omitempty"`
}

// PrefillPoint is the prefill rate of a whole prompt of Tokens tokens.
type PrefillPoint struct {
	Tokens  int     `yaml:"tokens"`
	TokPerS float64 `yaml:"tok_per_s"`
}

// Decode is the decode speed: step time by batch size plus a term per token of context in the
// batch.
type Decode struct {
	Steps []DecodePoint `yaml:"steps"`
	// MsPerMillionContextTokens is added to a step per million tokens of context summed over the
	// batch's sequences.
	MsPerMillionContextTokens float64 `yaml:"ms_per_million_context_tokens"`
}

// DecodePoint is the time of one decode (verification) step at a batch size.
type DecodePoint struct {
	Batch  float64 `yaml:"batch"`
	StepMs float64 `yaml:"step_ms"`
}

// Frontend is the API server's work on each request before the engine sees it, done one
// request at a time; the request is neither running nor waiting meanwhile.
type Frontend struct {
	BaseMs           float64 `yaml:"base_ms"`
	USPerPromptToken float64 `yaml:"us_per_prompt_token,omitempty"`
}

// SpecDecode is speculative decoding.
type SpecDecode struct {
	NumSpeculativeTokens int `yaml:"num_speculative_tokens"`
	// Acceptance[j] is the probability that exactly j draft tokens are accepted in a step.
	Acceptance []float64 `yaml:"acceptance,omitempty"`
}

// Output is how long answers are when the client lets the model stop.
type Output struct {
	MeanNaturalTokens float64 `yaml:"mean_natural_tokens,omitempty"`
}

// Noise is the profile's default noise.
type Noise struct {
	CV float64 `yaml:"cv,omitempty"`
}

// FitInfo says how a profile was fitted.
type FitInfo struct {
	Source string   `yaml:"source"`
	Notes  []string `yaml:"notes,omitempty"`
}

// Names returns the names of the embedded profiles.
func Names() []string {
	entries, _ := fs.ReadDir(embedded, "profiles")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// Load returns the embedded profile called nameOrPath, or else reads the file at that path with
// readFile (os.ReadFile when nil).
func Load(nameOrPath string, readFile func(string) ([]byte, error)) (*Profile, error) {
	if data, err := embedded.ReadFile(path.Join("profiles", nameOrPath+".yaml")); err == nil && !strings.ContainsAny(nameOrPath, `/\`) {
		return Parse(bytes.NewReader(data), nameOrPath)
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	data, err := readFile(nameOrPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("profile %q is neither a built-in profile (%s) nor a readable file: %w", nameOrPath, strings.Join(Names(), ", "), err)
		}
		return nil, fmt.Errorf("profile %q: %w", nameOrPath, err)
	}
	return Parse(bytes.NewReader(data), nameOrPath)
}

// Parse reads a profile from YAML, rejecting unknown keys, and validates it. name is used in
// error messages.
func Parse(r io.Reader, name string) (*Profile, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("profile %s: empty file", name)
		}
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return &p, nil
}

// Marshal returns the profile as YAML.
func (p *Profile) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Validate checks the profile; it reports the first problem with the key that has it.
func (p *Profile) Validate() error {
	switch {
	case p.Name == "":
		return errors.New("name: missing")
	case p.ServedModel == "":
		return errors.New("served_model: missing")
	case p.Noise.CV < 0 || p.Noise.CV > 1:
		return fmt.Errorf("noise.cv: %g out of range 0..1", p.Noise.CV)
	}
	for i, pt := range p.Prefill.Points {
		if pt.Tokens <= 0 || !(pt.TokPerS > 0) || math.IsInf(pt.TokPerS, 0) {
			return fmt.Errorf("prefill.points[%d]: tokens and tok_per_s must be positive", i)
		}
	}
	for i, pt := range p.Decode.Steps {
		if !(pt.Batch >= 1) || !(pt.StepMs > 0) || math.IsInf(pt.StepMs, 0) || math.IsInf(pt.Batch, 0) {
			return fmt.Errorf("decode.steps[%d]: batch must be ≥ 1 and step_ms positive", i)
		}
	}
	cfg, err := p.EngineConfig(0, 0)
	if err != nil {
		return err
	}
	return cfg.Validate()
}

// EngineConfig converts the profile to an engine configuration with the given seed and noise
// (noiseCV < 0 means the profile's own).
func (p *Profile) EngineConfig(seed uint64, noiseCV float64) (engine.Config, error) {
	if noiseCV < 0 {
		noiseCV = p.Noise.CV
	}
	t := engine.Timing{
		DecodePerContextToken: p.Decode.MsPerMillionContextTokens / 1e3 / 1e6,
		FrontendBase:          p.Frontend.BaseMs / 1e3,
		FrontendPerToken:      p.Frontend.USPerPromptToken / 1e6,
		CachedPerToken:        p.Prefill.USPerCachedToken / 1e6,
	}
	for _, pt := range p.Prefill.Points {
		t.Prefill = append(t.Prefill, engine.Point{X: float64(pt.Tokens), Y: float64(pt.Tokens) / pt.TokPerS})
	}
	for _, pt := range p.Decode.Steps {
		t.Decode = append(t.Decode, engine.Point{X: pt.Batch, Y: pt.StepMs / 1e3})
	}
	cfg := engine.Config{
		MaxNumSeqs:          p.MaxNumSeqs,
		MaxRunning:          p.MaxRunning,
		MaxNumBatchedTokens: p.MaxNumBatchedTokens,
		BlockSize:           p.KVCache.BlockSize,
		NumBlocks:           p.KVCache.NumGPUBlocks,
		MaxModelLen:         p.MaxModelLen,
		NumSpecTokens:       p.SpecDecode.NumSpeculativeTokens,
		Acceptance:          p.SpecDecode.Acceptance,
		MeanNaturalOutput:   p.Output.MeanNaturalTokens,
		Timing:              t,
		NoiseCV:             noiseCV,
		Seed:                seed,
	}
	if err := cfg.Validate(); err != nil {
		return engine.Config{}, err
	}
	return cfg, nil
}

// GeometricAcceptance returns the acceptance distribution of k draft tokens when each is
// accepted with probability a given that all before it were: P(j) = a^j (1−a) for j < k and
// a^k for j = k.
func GeometricAcceptance(k int, a float64) []float64 {
	d := make([]float64, k+1)
	for j := range k {
		d[j] = math.Pow(a, float64(j)) * (1 - a)
	}
	d[k] = math.Pow(a, float64(k))
	return d
}

// AcceptanceForMean returns the per-token acceptance rate a of GeometricAcceptance(k, a) whose
// mean tokens per step (1 + accepted) is mean, by bisection; mean is clamped to 1..k+1.
func AcceptanceForMean(k int, mean float64) float64 {
	lo, hi := 0.0, 1.0
	for range 100 {
		a := (lo + hi) / 2
		m := 1.0
		for j, p := range GeometricAcceptance(k, a) {
			m += float64(j) * p
		}
		if m < mean {
			lo = a
		} else {
			hi = a
		}
	}
	return (lo + hi) / 2
}
