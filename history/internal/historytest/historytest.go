// Package historytest holds the histories that the tests of package history and its page
// share: a hand-made one of two cells and a synthetic one of the reference matrix. It is for
// tests only.
package historytest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/results"
)

// Start is the start of the first run of each history.
var Start = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// Commit returns the commit of run i: 40 hex digits.
func Commit(i int) string { return fmt.Sprintf("%07x%033d", 0xa000000+i*0x1111, i) }

// Synthetic returns n runs of calibrate's synthetic matrix, one a day, with the decode row
// slowRow slowed by 6 % (2δ: rates × 0.94, TTFT × 1.06) from run slowAt on (no slowdown when
// slowRow is "").
func Synthetic(t testing.TB, n, slowAt int, slowRow string) []*results.File {
	t.Helper()
	m := calibrate.NewMatrix(11, 1)
	r := rand.New(rand.NewPCG(12, 13))
	files := make([]*results.File, n)
	for i := range files {
		var slow *calibrate.Slowdown
		if slowRow != "" && i >= slowAt {
			slow = &calibrate.Slowdown{ContextLabel: slowRow, RateFactor: 0.94, TTFTFactor: 1.06}
		}
		f := m.Run(r, fmt.Sprintf("run-%02d", i), slow)
		f.Engine.Commit = Commit(i)
		f.Run.Start = Start.Add(time.Duration(i) * 24 * time.Hour)
		if err := results.Validate(f); err != nil {
			t.Fatalf("synthetic run %d: %v", i, err)
		}
		files[i] = f
	}
	return files
}

// f64 returns a pointer to v.
func f64(v float64) *float64 { return &v }

// Small returns a hand-made history: prefill/8K and decode/8K/32 over 12 runs, one an hour,
// decode/8K/32's total tok/s falling by 10 % at run 6, its TTFT missing at run 3, the cell over
// capacity at run 9 and absent at run 10.
func Small() []*results.File {
	var files []*results.File
	for i := range 12 {
		rate := 1000 + float64(i%3)*5
		if i >= 6 {
			rate *= 0.9
		}
		f := &results.File{
			Schema: results.SchemaV1, Engine: results.Engine{Name: "vllm", Commit: Commit(i)},
			Hardware: results.Hardware{GPU: "H200", GPUCount: 1},
			Run: results.Run{ID: fmt.Sprintf("r%d", i), Source: results.SourceMeasured, ServedModel: "m", Start: Start.Add(time.Duration(i) * time.Hour),
				Tool: results.Tool{Name: "test"}},
			Prefill: []results.PrefillCell{{Context: 8192, ContextLabel: "8K", Status: results.StatusValid, PromptTokPerS: f64(9000 + float64(i%2)*10), TTFTMs: f64(900)}},
		}
		d := results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: 32, Status: results.StatusValid}
		d.TotalTokPerS, d.TTFTMs = f64(rate), f64(200)
		switch i {
		case 3:
			d.TTFTMs = nil
		case 9:
			d = results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: 32, Status: results.StatusOverCapacity}
		}
		if i != 10 {
			f.Decode = []results.DecodeCell{d}
		}
		files = append(files, f)
	}
	return files
}
