package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/speedmatrix/speedmatrix/results"
)

func TestDecodeLength(t *testing.T) {
	cases := []struct {
		nominal, maxModelLen, maxTokens int
		want                            int
		skip                            bool
	}{
		{8192, 0, 4096, 8192, false},                 // unknown limit: untouched
		{8192, 1 << 20, 4096, 8192, false},           // fits
		{1 << 20, 1 << 20, 4096, 1044416, false},     // the reference's 1019K
		{1 << 20, 1 << 20, 4096 * 30, 0, true},       // would lose > 10 %
		{8192, 8192 + 4096 + 64, 4096, 8192, false},  // fits exactly
		{8192, 8192 + 4096 + 63, 4096, 8191, false},  // one token short: trimmed by one
		{10240, 9216 + 4096 + 64, 4096, 9216, false}, // loses exactly 10 %
		{10240, 9215 + 4096 + 64, 4096, 0, true},     // loses more than 10 %
	}
	for _, c := range cases {
		got, skip := decodeLength(c.nominal, c.maxModelLen, c.maxTokens)
		if got != c.want || (skip != "") != c.skip {
			t.Errorf("decodeLength(%d, %d, %d) = %d, %q; want %d, skip %v", c.nominal, c.maxModelLen, c.maxTokens, got, skip, c.want, c.skip)
		}
	}
	if got := results.ContextLabel(1044416); got != "1019K" {
		t.Errorf("label of the trimmed 1024K = %s, want 1019K", got)
	}
}

// cellList renders a plan as the cells it measures or marks, for comparison.
func cellList(plan []*ctxPlan) []string {
	var out []string
	for _, p := range plan {
		if p.Skip != "" {
			out = append(out, fmt.Sprintf("skip %s %v prefill=%v", p.Label, p.Decode, p.Prefill))
			continue
		}
		if p.Prefill {
			out = append(out, fmt.Sprintf("prefill/%s (%d tokens)", p.Label, p.Tokens))
		}
		for _, c := range p.Decode {
			out = append(out, fmt.Sprintf("decode/%s/%d", p.Label, c))
		}
		for _, c := range p.OverCap {
			out = append(out, fmt.Sprintf("over/%s/%d", p.Label, c))
		}
	}
	return out
}

// TestFullMatrixPlanLikeReference checks the full matrix against the reference report: with
// max_model_len 1M and a KV cache between what its largest valid cell needs and what its
// smallest over-capacity cell needs, the plan has exactly the reference's cells and statuses.
func TestFullMatrixPlanLikeReference(t *testing.T) {
	plan, notes := buildPlan(planInput{
		Matrix:            FullMatrix(),
		PrefillFromDecode: true,
		MaxModelLen:       1 << 20,
		MaxTokens:         4096,
		KVCacheTokens:     3_000_000,
	})
	var prefill []string
	over := map[string]bool{}
	decode := 0
	for _, p := range plan {
		if p.Prefill {
			prefill = append(prefill, p.Label)
		}
		decode += len(p.Decode)
		for _, c := range p.OverCap {
			over[fmt.Sprintf("%s/%d", p.Label, c)] = true
		}
	}
	if diff := cmp.Diff([]string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1019K", "1024K"}, prefill); diff != "" {
		t.Errorf("prefill contexts (-reference +plan):\n%s", diff)
	}
	// The reference's over-capacity cells.
	wantOver := []string{"32K/128", "64K/64", "64K/128", "128K/32", "128K/64", "128K/128",
		"256K/16", "256K/32", "256K/64", "256K/128", "512K/8", "512K/16", "512K/32", "512K/64", "512K/128",
		"1019K/4", "1019K/8", "1019K/16", "1019K/32", "1019K/64", "1019K/128"}
	for _, w := range wantOver {
		if !over[w] {
			t.Errorf("cell %s is over capacity in the reference, not in the plan", w)
		}
	}
	if len(over) != len(wantOver) {
		t.Errorf("%d over-capacity cells, the reference has %d", len(over), len(wantOver))
	}
	if decode+len(over) != 64 {
		t.Errorf("%d decode cells in all, want 64", decode+len(over))
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "(1019K)") || !strings.Contains(notes[1], "1048575 prompt tokens") {
		t.Errorf("notes %q, want one on 1024K trimmed to 1019K and one on the 1024K prefill's length", notes)
	}
	// The untrimmed 1024K prefill stays within max_model_len.
	last := plan[len(plan)-1]
	if last.Label != "1024K" || last.Tokens != 1<<20-1 || last.Context != 1<<20 || len(last.Decode) != 0 {
		t.Errorf("last context %+v, want the untrimmed 1024K prefill of 1048575 tokens", *last)
	}
}

func TestPlanCells(t *testing.T) {
	ids := func(ss ...string) []results.CellID {
		var out []results.CellID
		for _, s := range ss {
			id, err := results.ParseCellID(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return out
	}
	cases := []struct {
		name  string
		in    planInput
		want  []string
		notes int
	}{
		{
			name: "cells replace the matrix",
			in:   planInput{Matrix: FullMatrix(), PrefillFromDecode: true, Cells: ids("decode/8K/32", "8K/1", "prefill/16K"), MaxModelLen: 1 << 20, MaxTokens: 4096},
			want: []string{"decode/8K/1", "decode/8K/32", "prefill/16K (16384 tokens)"},
		},
		{
			name:  "a cell whose context no longer fits is trimmed, with a note",
			in:    planInput{Cells: ids("decode/1024K/2"), MaxModelLen: 1 << 20, MaxTokens: 4096},
			want:  []string{"decode/1019K/2"},
			notes: 2,
		},
		{
			name: "over capacity from the KV cache",
			in:   planInput{Matrix: Matrix{Contexts: []int{1024, 4096}, Concurrency: []int{1, 2, 4}}, MaxTokens: 100, KVCacheTokens: 16384},
			want: []string{"decode/1K/1", "decode/1K/2", "decode/1K/4", "decode/4K/1", "decode/4K/2", "over/4K/4"},
		},
		{
			name: "boundary: C·(context+max_tokens) equal to the capacity fits",
			in:   planInput{Matrix: Matrix{Contexts: []int{1000}, Concurrency: []int{4, 5}}, MaxTokens: 24, KVCacheTokens: 4096},
			want: []string{"decode/1000/4", "over/1000/5"},
		},
		{
			name: "a context that cannot fit is skipped",
			in:   planInput{Matrix: Matrix{Contexts: []int{8192, 65536}, Concurrency: []int{1}}, PrefillFromDecode: true, MaxModelLen: 32768, MaxTokens: 4096},
			want: []string{"prefill/8K (8192 tokens)", "decode/8K/1", "skip 64K [1] prefill=false", "skip 64K [] prefill=true"},
		},
		{
			name: "explicit prefill contexts at full length",
			in:   planInput{Matrix: Matrix{Contexts: []int{8192}, Concurrency: []int{1}, PrefillContexts: []int{8192, 16384}}, MaxModelLen: 1 << 20, MaxTokens: 4096},
			want: []string{"prefill/8K (8192 tokens)", "decode/8K/1", "prefill/16K (16384 tokens)"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, notes := buildPlan(c.in)
			if diff := cmp.Diff(c.want, cellList(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if len(notes) != c.notes {
				t.Errorf("notes %q, want %d", notes, c.notes)
			}
		})
	}
}

// TestDecodeStatus covers every rule of the queued status (bench's decodeStatus), each at its boundary.
func TestDecodeStatus(t *testing.T) {
	cases := []struct {
		name string
		in   statusInput
		want results.Status
		why  string
	}{
		{"all C running, none waiting", statusInput{Concurrency: 8, Running: []float64{8, 8, 8}, Waiting: []float64{0, 0, 0}}, results.StatusValid, ""},
		{"readiness timed out", statusInput{Concurrency: 8, ReadinessTimedOut: true, Running: []float64{8, 8}, Waiting: []float64{0, 0}}, results.StatusQueued, "readiness timed out"},
		{"max running below C", statusInput{Concurrency: 8, Running: []float64{7, 7, 7}, Waiting: []float64{0, 0, 0}}, results.StatusQueued, "max running below concurrency"},
		{"mean running just below 0.95·C", statusInput{Concurrency: 20, Running: []float64{20, 17.99}, Waiting: []float64{0, 0}}, results.StatusQueued, "mean running below 0.95 × concurrency"},
		{"mean running exactly 0.95·C", statusInput{Concurrency: 20, Running: []float64{20, 18}, Waiting: []float64{0, 0}}, results.StatusValid, ""},
		{"one waiting sample does not decide", statusInput{Concurrency: 4, Running: []float64{4, 4, 4}, Waiting: []float64{0, 1, 0}}, results.StatusValid, ""},
		{"waiting in two samples in a row", statusInput{Concurrency: 4, Running: []float64{4, 4, 4}, Waiting: []float64{0, 1, 2}}, results.StatusQueued, "requests waiting"},
		{"a single sample that waits", statusInput{Concurrency: 4, Running: []float64{4}, Waiting: []float64{1}}, results.StatusQueued, "requests waiting"},
		{"readiness saw a queue", statusInput{Concurrency: 4, ReadinessQueued: true, Running: []float64{4, 4}, Waiting: []float64{0, 0}}, results.StatusQueued, "requests waited while running stopped rising"},
		// Issue 9: at C = 1, one of two 1 s samples of a 2 s window fell between one request
		// and the next. Weighted by the time each holds, and with the client's own restart
		// counted, the gap does not make the cell queued.
		{"C=1: a sample in the gap between two requests", statusInput{Concurrency: 1, Running: []float64{1, 0}, Waiting: []float64{0, 0}, Awaiting: []float64{0, 1},
			At: []time.Duration{0, time.Second}, Window: 2 * time.Second}, results.StatusValid, ""},
		{"C=1: the same gap without the client's restart is the server's", statusInput{Concurrency: 1, Running: []float64{1, 0}, Waiting: []float64{0, 0}, Awaiting: []float64{0, 0},
			At: []time.Duration{0, time.Second}, Window: 2 * time.Second}, results.StatusQueued, "mean running below 0.95 × concurrency"},
		{"a short dip weighs the time it holds", statusInput{Concurrency: 4, Running: []float64{4, 2, 4}, Waiting: []float64{0, 0, 0},
			At: []time.Duration{0, 950 * time.Millisecond, 1000 * time.Millisecond}, Window: 2 * time.Second}, results.StatusValid, ""},
		{"a long dip is below 0.95·C", statusInput{Concurrency: 4, Running: []float64{4, 2, 4}, Waiting: []float64{0, 0, 0},
			At: []time.Duration{0, 100 * time.Millisecond, 1000 * time.Millisecond}, Window: 2 * time.Second}, results.StatusQueued, "mean running below 0.95 × concurrency"},
		// A client kept off the CPU (a loaded machine; a simulator's speedup magnifies it)
		// reads a request's last chunk late: the server has ended it and runs C-1 while the
		// client has not yet restarted it. Counted as the client's, it is not the server's queue.
		{"C=2: the server ended a request whose end the client has not read", statusInput{Concurrency: 2, Running: []float64{2, 1, 1, 2}, Waiting: []float64{0, 0, 0, 0},
			Awaiting: []float64{0, 0, 0, 0}, Unseen: []float64{0, 1, 1, 0}, At: []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond}, Window: 200 * time.Millisecond}, results.StatusValid, ""},
		{"C=2: the same dip with the end read is the server's", statusInput{Concurrency: 2, Running: []float64{2, 1, 1, 2}, Waiting: []float64{0, 0, 0, 0},
			Awaiting: []float64{0, 0, 0, 0}, Unseen: []float64{0, 0, 0, 0}, At: []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond}, Window: 200 * time.Millisecond}, results.StatusQueued, "mean running below 0.95 × concurrency"},
		{"no metrics: readiness only", statusInput{Concurrency: 4}, results.StatusValid, ""},
		{"no metrics, readiness timed out", statusInput{Concurrency: 4, ReadinessTimedOut: true}, results.StatusQueued, "readiness timed out"},
		{"running above C is fine", statusInput{Concurrency: 2, Running: []float64{3, 3}, Waiting: []float64{0, 0}}, results.StatusValid, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := decodeStatus(c.in)
			if got != c.want || why != c.why {
				t.Errorf("decodeStatus = %s (%q), want %s (%q)", got, why, c.want, c.why)
			}
		})
	}
}

// TestUnseen pins how many of the client's requests count as ended by the server but not yet
// read by the client: the difference of the two ended counts, never below 0, never above the
// client's producing streams (another client's requests are not this one's).
func TestUnseen(t *testing.T) {
	cases := []struct {
		server, client, producing, want float64
	}{
		{server: 3, client: 3, producing: 2, want: 0},
		{server: 4, client: 3, producing: 2, want: 1},
		{server: 2, client: 3, producing: 2, want: 0}, // the client read an end the first scrape had not counted
		{server: 9, client: 3, producing: 2, want: 2}, // others' requests ended too
		{server: 4, client: 3, producing: 0, want: 0},
	}
	for _, c := range cases {
		if got := unseen(c.server, c.client, c.producing); got != c.want {
			t.Errorf("unseen(%g, %g, %g) = %g, want %g", c.server, c.client, c.producing, got, c.want)
		}
	}
}
