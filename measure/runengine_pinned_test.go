package measure

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/config"
)

// TestAcceptancePassOptions: the pass measures the smallest and largest decode context (or the
// configured ones) at the pass's concurrency and trials, no prefill, into its own file, unpinned.
func TestAcceptancePassOptions(t *testing.T) {
	o := defaultSession()
	o.Output = "r.json"
	o.Contexts = config.List{"32K", "8K", "128K"}
	o.SpecDecode = config.SpecDecode{Mode: config.SpecDecodePinned}
	p, err := acceptancePassOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{[]string(p.Contexts), []string(p.Concurrency), []string(p.PrefillContexts), p.Trials, p.Output, p.SpecDecode.Pinned()}
	want := []any{[]string{"8K", "128K"}, []string{"1"}, []string{"none"}, 3, "r.json.acceptance.json", false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	o.SpecDecode = config.SpecDecode{Mode: config.SpecDecodePinned, AcceptanceContexts: config.List{"16K"}, AcceptanceConcurrency: 2, AcceptanceTrials: 5}
	if p, err = acceptancePassOptions(o); err != nil {
		t.Fatal(err)
	}
	if got, want := []any{[]string(p.Contexts), []string(p.Concurrency), p.Trials}, []any{[]string{"16K"}, []string{"2"}, 5}; !cmp.Equal(got, want) {
		t.Errorf("configured pass: %v, want %v", got, want)
	}
	// A rerun's trials count for the pass; a prefill-only rerun has no pass.
	o.Trials = 6
	if p, err = acceptancePassOptions(o); err != nil || p.Trials != 6 {
		t.Errorf("rerun with --trials 6: pass trials %d (%v), want 6", p.Trials, err)
	}
	o.SpecDecode.AcceptanceContexts = nil
	o.Cells = config.List{"prefill/8K"}
	if p, err = acceptancePassOptions(o); err != nil || len(p.Contexts) != 0 {
		t.Errorf("prefill-only rerun: pass contexts %v (%v), want none", p.Contexts, err)
	}
	o.URL = "http://127.0.0.1:1"
	if err := runEnginePinned(context.Background(), &Deps{Stderr: io.Discard, Getenv: func(string) string { return "" }, Log: slog.New(slog.DiscardHandler)}, o); err == nil || !strings.Contains(err.Error(), "needs engine.serve") {
		t.Errorf("pinned with --url: %v, want a settings error", err)
	}
}
