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
	opts := vmatrix.ReferenceOptions(p.MaxModelLen)
	got, err := vmatrix.Run(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	fmt.Fprintf(&table, "%-8s %4s %-13s %-13s %9s %9s %6s %8s %8s\n", "context", "C", "ref status", "sim status", "ref tok/s", "sim tok/s", "diff", "ref act", "sim act")
	if len(got.Prefill) != len(ref.Prefill) {
		t.Fatalf("prefill cells: got %d, reference %d", len(got.Prefill), len(ref.Prefill))
	}
	for i, rc := range ref.Prefill {
		gc := got.Prefill[i]
		d := rel(*gc.PromptTokPerS, *rc.PromptTokPerS)
		fmt.Fprintf(&table, "%-8s %4s %-13s %-13s %9.0f %9.0f %+5.1f%% %8s %8s\n", rc.ContextLabel, "pf", rc.Status, gc.Status, *rc.PromptTokPerS, *gc.PromptTokPerS, 100*d, "", "")
		if math.Abs(d) > 0.10 {
			t.Errorf("prefill %s: %.0f tok/s, reference %.0f (%+.1f%%, limit ±10%%)", rc.ContextLabel, *gc.PromptTokPerS, *rc.PromptTokPerS, 100*d)
		}
	}
	if len(got.Decode) != len(ref.Decode) {
		t.Fatalf("decode cells: got %d, reference %d", len(got.Decode), len(ref.Decode))
	}
	for i, rc := range ref.Decode {
		gc := got.Decode[i]
		if gc.ContextLabel != rc.ContextLabel || gc.Concurrency != rc.Concurrency {
			t.Fatalf("cell %d: got %s×%d, reference %s×%d", i, gc.ContextLabel, gc.Concurrency, rc.ContextLabel, rc.Concurrency)
		}
		if gc.Status != rc.Status {
			t.Errorf("decode %s×%d: status %s, reference %s", rc.ContextLabel, rc.Concurrency, gc.Status, rc.Status)
		}
		if !rc.Status.Measured() {
			fmt.Fprintf(&table, "%-8s %4d %-13s %-13s\n", rc.ContextLabel, rc.Concurrency, rc.Status, gc.Status)
			continue
		}
		d := rel(*gc.TotalTokPerS, *rc.TotalTokPerS)
		fmt.Fprintf(&table, "%-8s %4d %-13s %-13s %9.1f %9.1f %+5.1f%% %8.1f %8.1f\n", rc.ContextLabel, rc.Concurrency, rc.Status, gc.Status, *rc.TotalTokPerS, *gc.TotalTokPerS, 100*d, *rc.AvgActiveRequests, *gc.AvgActiveRequests)
		if rc.Status == results.StatusValid && math.Abs(d) > 0.15 {
			t.Errorf("decode %s×%d: %.1f tok/s, reference %.1f (%+.1f%%, limit ±15%%)", rc.ContextLabel, rc.Concurrency, *gc.TotalTokPerS, *rc.TotalTokPerS, 100*d)
		}
	}
	t.Logf("simulated reference matrix (pf = prefill):\n%s", strings.TrimRight(table.String(), "\n"))
}

func rel(got, want float64) float64 { return got/want - 1 }
