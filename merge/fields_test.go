package merge

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/speedmatrix/speedmatrix/results"
)

// pinned marks f as served with acceptance pinned at length, its acceptance pass holding a
// concurrency-1 cell of each nominal context (K) given.
func pinned(f *results.File, length float64, rowsK ...int) {
	f.SpecDecode = &results.SpecDecode{Mode: results.SpecDecodePinned, PinnedAcceptanceLength: length, PinnedFrom: results.PinnedFromConfig}
	for _, r := range rowsK {
		f.SpecDecode.AcceptancePass = append(f.SpecDecode.AcceptancePass,
			results.DecodeCell{Context: r * 1024, ContextLabel: results.ContextLabel(r * 1024), Concurrency: 1, Status: results.StatusOverCapacity})
	}
}

// TestShardsCarriesSpecDecode: shards served with acceptance pinned give a merged file that says
// so, with every shard's acceptance-pass cells in a single run's order; compare reads the
// acceptance from there.
func TestShardsCarriesSpecDecode(t *testing.T) {
	in := twoShards() // 2/2 holds 16K and 32K, 1/2 holds 8K and 64K
	pinned(in[0].File, 3.1, 16)
	pinned(in[1].File, 3.1, 8, 64)
	got, err := Shards(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Pinned() || got.SpecDecode.PinnedAcceptanceLength != 3.1 || got.SpecDecode.PinnedFrom != results.PinnedFromConfig {
		t.Fatalf("merged spec_decode %+v, want pinned at 3.1 from the config", got.SpecDecode)
	}
	var ids []string
	for _, c := range got.SpecDecode.AcceptancePass {
		ids = append(ids, c.ID().String())
	}
	if diff := cmp.Diff([]string{"decode/8K/1", "decode/16K/1", "decode/64K/1"}, ids); diff != "" {
		t.Errorf("acceptance pass (-want +got):\n%s", diff)
	}
	if got.AcceptanceCell(results.CellID{Phase: results.PhaseDecode, ContextLabel: "16K", Concurrency: 1}) != nil {
		t.Errorf("an over-capacity pass cell counts as measured")
	}
	if in[1].File.SpecDecode.AcceptancePass[1].ContextLabel != "64K" || len(in[0].File.SpecDecode.AcceptancePass) != 1 {
		t.Errorf("merging changed a shard's acceptance pass")
	}
}

// TestShardsSumsGPUTime: the merged GPU time is every shard job's, phase by phase, with every
// shard's undecided cells.
func TestShardsSumsGPUTime(t *testing.T) {
	in := twoShards()
	in[0].File.Run.GPUTime = &results.GPUTime{BudgetSeconds: 600, BuildSeconds: 100, LoadSeconds: 50, MeasureSeconds: 60, RerunSeconds: 30, TotalSeconds: 240, Reruns: 2,
		Undecided: []results.UndecidedCost{{Cell: "decode/16K/1", Reason: results.UndecidedOverBudget, FurtherTrials: 2, CostSeconds: 70}}}
	in[1].File.Run.GPUTime = &results.GPUTime{BudgetSeconds: 600, BuildSeconds: 110, LoadSeconds: 40, MeasureSeconds: 60, TotalSeconds: 210,
		Undecided: []results.UndecidedCost{{Cell: "decode/8K/1", Reason: results.UndecidedSecondLook}}}
	got, err := Shards(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &results.GPUTime{BudgetSeconds: 1200, BuildSeconds: 210, LoadSeconds: 90, MeasureSeconds: 120, RerunSeconds: 30, TotalSeconds: 450, Reruns: 2,
		Undecided: []results.UndecidedCost{
			{Cell: "decode/8K/1", Reason: results.UndecidedSecondLook},
			{Cell: "decode/16K/1", Reason: results.UndecidedOverBudget, FurtherTrials: 2, CostSeconds: 70},
		}}
	if diff := cmp.Diff(want, got.Run.GPUTime); diff != "" {
		t.Errorf("GPU time (-want +got):\n%s", diff)
	}
	// A shard without a record (an older speedmatrix) leaves the sum unknown, not low.
	in[0].File.Run.GPUTime = nil
	if got, err = Shards(in, Options{}); err != nil || got.Run.GPUTime != nil {
		t.Errorf("one shard without gpu_time: err %v, gpu_time %+v; want none", err, got.Run.GPUTime)
	}
}

// TestShardsMergesRunnerFacts: what may differ between the runners of one group without
// changing the numbers is kept from every shard and said: persistence mode "mixed", another CPU
// model or OS in a note, every extra fact once, a server without metrics named.
func TestShardsMergesRunnerFacts(t *testing.T) {
	in := twoShards()
	a, b := in[0].File, in[1].File
	b.Hardware.PersistenceMode, a.Hardware.PersistenceMode = "Enabled", "Disabled"
	b.Hardware.CPUModel, a.Hardware.CPUModel = "EPYC 9654", "Xeon 8480"
	b.Hardware.Extra, a.Hardware.Extra = []results.KV{{Key: "rack", Value: "r1"}}, []results.KV{{Key: "rack", Value: "r2"}}
	b.Engine.Extra, a.Engine.Extra = []results.KV{{Key: "image", Value: "x"}}, []results.KV{{Key: "image", Value: "x"}}
	b.Run.Extra = []results.KV{{Key: "runner", Value: "gpu-1"}}
	a.Run.Extra = []results.KV{{Key: "runner", Value: "gpu-2"}}
	b.Server.Metrics, a.Server.Metrics = "vllm", "none"
	got, err := Shards(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Hardware.PersistenceMode != "mixed" {
		t.Errorf("persistence mode %q, want mixed", got.Hardware.PersistenceMode)
	}
	if diff := cmp.Diff([]results.KV{{Key: "rack", Value: "r1"}, {Key: "rack", Value: "r2"}}, got.Hardware.Extra); diff != "" {
		t.Errorf("hardware extra (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]results.KV{{Key: "image", Value: "x"}}, got.Engine.Extra); diff != "" {
		t.Errorf("engine extra (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]results.KV{{Key: "runner", Value: "gpu-1"}, {Key: "runner", Value: "gpu-2"}}, got.Run.Extra); diff != "" {
		t.Errorf("run extra (-want +got):\n%s", diff)
	}
	notes := strings.Join(got.Notes, "\n")
	for _, want := range []string{`CPU model "EPYC 9654" in shard-1.json but "Xeon 8480" in shard-2.json`, `server metrics "vllm" in shard-1.json but "none" in shard-2.json`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if err := results.Validate(got); err != nil {
		t.Error(err)
	}
}

// TestShardsJoinsPairing: the shards of a paired run (each shard's base and head served
// alternately on its runner) merge into one side whose pairing id joins the shards' ids in
// shard order, so that the merged base and head sides still pair.
func TestShardsJoinsPairing(t *testing.T) {
	in := twoShards()
	for i, id := range []string{"pB", "pA"} {
		in[i].File.Run.Pairing = &results.Pairing{ID: id, Scheme: results.PairingABBA, Blocks: 2, Side: "head", Order: "ABBA"}
	}
	got, err := Shards(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &results.Pairing{ID: "pA+pB", Scheme: results.PairingABBA, Blocks: 2, Side: "head", Order: "ABBA"}
	if diff := cmp.Diff(want, got.Run.Pairing); diff != "" {
		t.Errorf("pairing (-want +got):\n%s", diff)
	}
	if in[0].File.Run.Pairing.ID != "pB" {
		t.Errorf("merging changed a shard's pairing")
	}
}

// TestShardsRefusesSetups: what one run cannot mix, beyond TestShardsRefuses: the
// speculative-decoding setup, the speedmatrix that measured, the server's version and
// max_num_seqs, clocks locked at other values, the pairing's side or scheme.
func TestShardsRefusesSetups(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(a, b *results.File) // a is shard 2/2, b shard 1/2
		want   error
		says   string
	}{
		{"pinned and unpinned", func(a, b *results.File) { pinned(b, 3.1, 8) }, ErrSpecDecode, `speculative decoding is "pinned at 3.1 tokens per draft step" in shard-1.json but "as launched" in shard-2.json`},
		{"unpinned and pinned", func(a, b *results.File) { pinned(a, 3.1, 16) }, ErrSpecDecode, `"as launched" in shard-1.json but "pinned at 3.1 tokens per draft step" in shard-2.json`},
		{"pinned lengths", func(a, b *results.File) { pinned(b, 3.1, 8); pinned(a, 2.95, 16) }, ErrSpecDecode, "pinned at 2.95 tokens per draft step"},
		{"pinned from", func(a, b *results.File) {
			pinned(b, 3.1, 8)
			pinned(a, 3.1, 16)
			a.SpecDecode.PinnedFrom = results.PinnedFromAcceptance
		}, ErrSpecDecode, "from the acceptance pass"},
		{"same acceptance cell", func(a, b *results.File) { pinned(b, 3.1, 8); pinned(a, 3.1, 8) }, ErrDuplicate, "acceptance-pass cell decode/8K/1 is in both"},
		{"tool version", func(a, b *results.File) { b.Run.Tool.Version, a.Run.Tool.Version = "v1.2.0", "v1.3.0" }, ErrConfig, `speedmatrix is "speedmatrix v1.2.0" in shard-1.json but "speedmatrix v1.3.0"`},
		{"decode test", func(a, b *results.File) { a.Run.DecodeTest = "other" }, ErrConfig, "decode test"},
		{"engine repository", func(a, b *results.File) { a.Engine.Repository = "fork/vllm" }, ErrEngine, "engine repository"},
		{"server version", func(a, b *results.File) { b.Server.Version, a.Server.Version = "0.11.0", "0.11.1" }, ErrServer, "the server's version"},
		{"max_num_seqs", func(a, b *results.File) { b.Server.MaxNumSeqs, a.Server.MaxNumSeqs = 256, 128 }, ErrServer, "max_num_seqs"},
		{"locked clocks", func(a, b *results.File) {
			a.Hardware.ClocksLocked, b.Hardware.ClocksLocked = true, true
			a.Hardware.Clocks, b.Hardware.Clocks = "1500 MHz", "1980 MHz"
		}, ErrHardware, "hardware locked clocks"},
		{"paired and not", func(a, b *results.File) {
			b.Run.Pairing = &results.Pairing{ID: "p", Scheme: results.PairingABBA, Blocks: 1, Side: "base"}
		}, ErrConfig, "pairing"},
		{"paired sides", func(a, b *results.File) {
			b.Run.Pairing = &results.Pairing{ID: "p", Scheme: results.PairingABBA, Blocks: 1, Side: "base"}
			a.Run.Pairing = &results.Pairing{ID: "q", Scheme: results.PairingABBA, Blocks: 1, Side: "head"}
		}, ErrConfig, "pairing"},
	} {
		in := twoShards()
		tt.change(in[0].File, in[1].File)
		_, err := Shards(in, Options{})
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: error %v, want %v saying %q", tt.name, err, tt.want, tt.says)
		}
	}
}
