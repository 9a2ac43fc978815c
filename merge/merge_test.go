package merge

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// shardFile returns a valid results file of shard index/count of plan "p1" holding the rows
// (nominal contexts in K) given, each with a prefill cell and decode cells at 1 and 8 (over
// capacity: no numbers needed), started at minute index.
func shardFile(index, count int, rowsK ...int) *results.File {
	start := time.Date(2026, 12, 1, 0, index, 0, 0, time.UTC)
	f := &results.File{
		Schema:   results.SchemaV1,
		Hardware: results.Hardware{GPU: "H200 NVL", GPUCount: 2, VRAMPerGPUGB: 141, Driver: "580.1"},
		Engine:   results.Engine{Name: "vllm", Commit: "3b518982806c"},
		Run: results.Run{
			ID: "run" + string(rune('0'+index)), Source: results.SourceMeasured, ServedModel: "m", Tool: results.Tool{Name: "speedmatrix"},
			SecondsPerMeasurement: 30, MaxOutputTokens: 4096, Start: start, End: start.Add(time.Minute),
			Settings: &results.Settings{URL: "http://runner" + string(rune('0'+index)) + ":8000", Endpoint: "completions", Matrix: "custom",
				Contexts: []string{"8K", "16K", "32K", "64K"}, Concurrency: []int{1, 8}, PrefillContexts: []string{"8K", "16K", "32K", "64K"},
				DurationSeconds: 30, MaxTokens: 4096, Trials: 1},
			Budget: &results.Budget{WallSeconds: 60, SetupSeconds: 10, PrefillSeconds: 5, WindowSeconds: 40, OtherSeconds: 5},
			Shard:  &results.Shard{Index: index, Count: count, Plan: "p1"},
		},
		Server:  &results.Server{MaxModelLen: 1 << 20, KVCacheTokens: 100000},
		Prefill: []results.PrefillCell{},
		Decode:  []results.DecodeCell{},
		Notes:   []string{"shared note", "note of shard " + string(rune('0'+index))},
	}
	for _, r := range rowsK {
		label := results.ContextLabel(r * 1024)
		f.Run.Shard.Contexts = append(f.Run.Shard.Contexts, label)
		f.Prefill = append(f.Prefill, results.PrefillCell{Context: r * 1024, ContextLabel: label, Status: results.StatusSkipped, Error: "test"})
		for _, c := range []int{1, 8} {
			f.Decode = append(f.Decode, results.DecodeCell{Context: r * 1024, ContextLabel: label, Concurrency: c, Status: results.StatusOverCapacity})
		}
	}
	return f
}

// twoShards returns shard 1/2 (8K and 64K) and 2/2 (16K and 32K).
func twoShards() []Input {
	return []Input{{"shard-2.json", shardFile(2, 2, 16, 32)}, {"shard-1.json", shardFile(1, 2, 8, 64)}}
}

func cellIDs(f *results.File) []string {
	var out []string
	for i := range f.Prefill {
		out = append(out, f.Prefill[i].ID().String())
	}
	for i := range f.Decode {
		out = append(out, f.Decode[i].ID().String())
	}
	return out
}

func TestShardsJoinsLikeOneRun(t *testing.T) {
	got, err := Shards(twoShards(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"prefill/8K", "prefill/16K", "prefill/32K", "prefill/64K",
		"decode/8K/1", "decode/8K/8", "decode/16K/1", "decode/16K/8", "decode/32K/1", "decode/32K/8", "decode/64K/1", "decode/64K/8"}
	if diff := cmp.Diff(want, cellIDs(got)); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if got.Run.Shard != nil || got.Run.Partial {
		t.Errorf("merged run: shard %+v, partial %v; want neither", got.Run.Shard, got.Run.Partial)
	}
	wantBudget := &results.Budget{WallSeconds: 120, SetupSeconds: 20, PrefillSeconds: 10, WindowSeconds: 80, OtherSeconds: 10, WallPerMeasured: 120.0 / 90}
	if diff := cmp.Diff(wantBudget, got.Run.Budget); diff != "" {
		t.Errorf("budget (-want +got):\n%s", diff)
	}
	if !got.Run.Start.Equal(time.Date(2026, 12, 1, 0, 1, 0, 0, time.UTC)) || !got.Run.End.Equal(time.Date(2026, 12, 1, 0, 3, 0, 0, time.UTC)) {
		t.Errorf("merged run from %v to %v, want from the first start to the last end", got.Run.Start, got.Run.End)
	}
	if got.Run.ID != "run1-merged" || got.Run.Settings.URL != "http://runner1:8000" {
		t.Errorf("run id %q, url %q", got.Run.ID, got.Run.Settings.URL)
	}
	notes := strings.Join(got.Notes, "\n")
	if strings.Count(notes, "shared note") != 1 || !strings.Contains(notes, "note of shard 2") || !strings.Contains(notes, "merged from 2 of 2 shards of plan p1 (runs run1, run2)") {
		t.Errorf("notes:\n%s", notes)
	}
	if err := results.Validate(got); err != nil {
		t.Error(err)
	}
}

func TestShardsAllowPartial(t *testing.T) {
	in := twoShards()[:1]
	if _, err := Shards(in, Options{}); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "shard 1/2 of plan p1 not given") {
		t.Fatalf("a missing shard: error %v, want ErrMissing naming shard 1/2", err)
	}
	got, err := Shards(in, Options{AllowPartial: true})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Run.Partial || !strings.Contains(got.Run.PartialReason, "shard 1/2 of plan p1 not merged") {
		t.Errorf("partial %v, reason %q; want partial naming shard 1/2", got.Run.Partial, got.Run.PartialReason)
	}
	if diff := cmp.Diff([]string{"prefill/16K", "prefill/32K", "decode/16K/1", "decode/16K/8", "decode/32K/1", "decode/32K/8"}, cellIDs(got)); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	// A partial shard makes the merged file partial, with its reason.
	in = twoShards()
	in[0].File.Run.Partial, in[0].File.Run.PartialReason = true, "the server stopped answering"
	if got, err = Shards(in, Options{}); err != nil || !got.Run.Partial || got.Run.PartialReason != "shard 2/2: the server stopped answering" {
		t.Errorf("a partial shard: err %v, partial reason %q", err, got.Run.PartialReason)
	}
}

func TestShardsRefuses(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(a, b *results.File) // a is shard 2/2, b shard 1/2
		want   error
		says   string
	}{
		{"not a shard", func(a, b *results.File) { a.Run.Shard = nil }, ErrNotShard, "shard-2.json holds no run.shard"},
		{"other plan", func(a, b *results.File) { a.Run.Shard.Plan = "p2" }, ErrPlan, "shard 2/2 of plan p2"},
		{"other shard count", func(a, b *results.File) { a.Run.Shard.Count = 3 }, ErrPlan, "shard 2/3 of plan p1"},
		{"same shard twice", func(a, b *results.File) { a.Run.Shard.Index = 1 }, ErrDuplicate, "shard 1/2 is both"},
		{"same cell twice", func(a, b *results.File) {
			a.Decode = append(a.Decode, b.Decode[0])
		}, ErrDuplicate, "cell decode/8K/1 is in both shard-1.json and shard-2.json"},
		{"engine commit", func(a, b *results.File) { a.Engine.Commit = "0123456789ab" }, ErrEngine, `engine commit is "3b518982806c" in shard-1.json but "0123456789ab" in shard-2.json`},
		{"engine version", func(a, b *results.File) { a.Engine.Version = "0.11" }, ErrEngine, "engine version"},
		{"GPU", func(a, b *results.File) { a.Hardware.GPU = "H100" }, ErrHardware, `hardware GPU is "H200 NVL" in shard-1.json but "H100"`},
		{"GPU count", func(a, b *results.File) { a.Hardware.GPUCount = 4 }, ErrHardware, "hardware GPU count"},
		{"driver", func(a, b *results.File) { a.Hardware.Driver = "570.2" }, ErrHardware, "hardware GPU driver"},
		{"model", func(a, b *results.File) { a.Run.ServedModel = "other" }, ErrConfig, "the served model (config id"},
		{"launch command", func(a, b *results.File) { a.Run.LaunchCommand = "vllm serve m --tp 2" }, ErrConfig, "the launch command"},
		{"window", func(a, b *results.File) { a.Run.Settings.DurationSeconds = 60 }, ErrConfig, "the settings (config id"},
		{"trials", func(a, b *results.File) { a.Run.Settings.Trials = 3 }, ErrConfig, "run.settings"},
		{"max_model_len", func(a, b *results.File) { a.Server.MaxModelLen = 1 << 17 }, ErrServer, "max_model_len"},
	} {
		in := twoShards()
		tt.change(in[0].File, in[1].File)
		_, err := Shards(in, Options{AllowPartial: true})
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: error %v, want %v saying %q", tt.name, err, tt.want, tt.says)
		}
	}
	if _, err := Shards(nil, Options{}); !errors.Is(err, ErrMissing) {
		t.Errorf("no files: error %v, want ErrMissing", err)
	}
}

// TestShardsKeepsInputs checks that merging leaves the shards' files as they were.
func TestShardsKeepsInputs(t *testing.T) {
	in := twoShards()
	before := cellIDs(in[0].File)
	if _, err := Shards(in, Options{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, cellIDs(in[0].File)); diff != "" || in[0].File.Run.Shard == nil || in[0].Name != "shard-2.json" {
		t.Errorf("the inputs changed:\n%s", diff)
	}
}
