package profile_test

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim/profile"
	"github.com/speedmatrix/speedmatrix/sim/vmatrix"
)

var update = flag.Bool("update", false, "rewrite the shipped profile from the reference report")

const referencePath = "../../testdata/reference/glm-5.3-flash-nvfp4-h200nvl-x2.txt"

// referenceFitOptions are the options the shipped profile was fitted with.
func referenceFitOptions() profile.FitOptions {
	o := profile.DefaultFitOptions()
	o.Name = profile.Default
	o.BlockSize = 64 // FlashInfer MLA kernels page the KV cache in blocks of 64 tokens
	return o
}

func readReference(t testing.TB) *results.File {
	t.Helper()
	fh, err := os.Open(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := results.Import(fh, "glm-5.3-flash-nvfp4-h200nvl-x2.txt")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestShippedProfileIsFit checks that the embedded default profile is exactly what Fit makes of
// the reference report (run with -update to rewrite it).
func TestShippedProfileIsFit(t *testing.T) {
	p, err := profile.Fit(readReference(t), referenceFitOptions())
	if err != nil {
		t.Fatal(err)
	}
	p.Description = "GLM-5.3-Flash NVFP4 on 2× H200 NVL, vLLM with DFlash speculative decoding; fitted to the reference report (sim/PROFILES.md)"
	got, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	file := "profiles/" + profile.Default + ".yaml"
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("shipped profile differs from the fit (-shipped +fit); run go test ./sim/profile -run TestShippedProfileIsFit -update:\n%s", diff)
	}
}

// TestReferenceMatrix measures the reference matrix on the shipped profile in virtual time and
// checks the status pattern exactly, prefill tok/s within 10 % and decode total tok/s within
// 15 % of the reference's valid cells.
func TestReferenceMatrix(t *testing.T) {
	ref := readReference(t)
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.EngineConfig(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := vmatrix.Run(cfg, vmatrix.ReferenceOptions(p.MaxModelLen))
	if err != nil {
		t.Fatal(err)
	}
	diffs := vmatrix.Compare(ref, got)
	if len(diffs) != len(ref.Prefill)+len(ref.Decode) || len(got.Decode) != len(ref.Decode) || len(got.Prefill) != len(ref.Prefill) {
		t.Fatalf("the simulated matrix has %d prefill and %d decode cells, the reference %d and %d", len(got.Prefill), len(got.Decode), len(ref.Prefill), len(ref.Decode))
	}
	for _, d := range diffs {
		name := fmt.Sprintf("%s %s", d.Phase, d.Label)
		if d.Phase == results.PhaseDecode {
			name += fmt.Sprintf("×%d", d.Concurrency)
		}
		if d.Status != d.RefStatus {
			t.Errorf("%s: status %s, reference %s", name, d.Status, d.RefStatus)
		}
		if d.RefStatus != results.StatusValid {
			continue
		}
		limit := 0.15
		if d.Phase == results.PhasePrefill {
			limit = 0.10
		}
		if r := d.Rel(); !(math.Abs(r) <= limit) {
			t.Errorf("%s: %.1f tok/s against the reference's %.1f (%+.1f%%, limit ±%.0f%%)", name, deref(d.Got), deref(d.Ref), 100*r, 100*limit)
		}
	}
	var table bytes.Buffer
	if err := vmatrix.WriteTable(&table, diffs); err != nil {
		t.Fatal(err)
	}
	t.Logf("simulated reference matrix:\n%s", strings.TrimRight(table.String(), "\n"))
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// TestFitInvertsTheModel measures the shipped profile's reference matrix in virtual time, as if
// through a simulator at 20× speed, and fits a profile to that measurement: the fit must give
// back the profile's engine facts exactly and its speeds closely.
func TestFitInvertsTheModel(t *testing.T) {
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := p.EngineConfig(1, 0)
	f, err := vmatrix.Run(cfg, vmatrix.ReferenceOptions(p.MaxModelLen))
	if err != nil {
		t.Fatal(err)
	}
	const s = 20.0
	f.Run.Settings = &results.Settings{Simulator: &results.SimulatorSettings{Profile: p.Name, Speedup: s}}
	// The engine facts come from Server (KV, max_model_len) and, as for a real server, the
	// launch command (max_num_seqs, speculative tokens).
	f.Run.LaunchCommand = `vllm serve m --max-num-seqs 32 --speculative-config '{"num_speculative_tokens":7}'`
	for i := range f.Decode {
		c := &f.Decode[i]
		for _, q := range []**float64{&c.TotalTokPerS, &c.PerRequestTokPerS} {
			if *q != nil {
				v := **q * s
				*q = &v
			}
		}
		for _, q := range []**float64{&c.TTFTMs, &c.TBTMs} {
			if *q != nil {
				v := **q / s
				*q = &v
			}
		}
	}
	for i := range f.Prefill {
		c := &f.Prefill[i]
		v, w := *c.PromptTokPerS*s, *c.TTFTMs/s
		c.PromptTokPerS, c.TTFTMs = &v, &w
	}
	o := referenceFitOptions()
	got, err := profile.Fit(f, o)
	if err != nil {
		t.Fatal(err)
	}
	if got.KVCache != p.KVCache && got.KVCache.NumGPUBlocks != p.KVCache.NumGPUBlocks {
		t.Errorf("KV cache %+v, want %+v", got.KVCache, p.KVCache)
	}
	if got.MaxRunning != p.MaxRunning {
		t.Errorf("running ceiling %d, want %d", got.MaxRunning, p.MaxRunning)
	}
	near := func(name string, got, want, tol float64) {
		if math.Abs(got/want-1) > tol {
			t.Errorf("%s: fitted %.4g, profile %.4g (tolerance %.0f%%)", name, got, want, 100*tol)
		}
	}
	near("frontend base", got.Frontend.BaseMs, p.Frontend.BaseMs, 0.15)
	near("cached take-up", got.Prefill.USPerCachedToken, p.Prefill.USPerCachedToken, 0.15)
	// Decode steps by batch: the fit sees the model through windows and restarts.
	for _, want := range p.Decode.Steps[:5] {
		for _, g := range got.Decode.Steps {
			if g.Batch == want.Batch {
				near(fmt.Sprintf("decode step at batch %g", want.Batch), g.StepMs, want.StepMs, 0.10)
			}
		}
	}
	for i, want := range p.Prefill.Points[1:] {
		near(fmt.Sprintf("prefill rate at %d", want.Tokens), got.Prefill.Points[i+1].TokPerS, want.TokPerS, 0.15)
	}
}
