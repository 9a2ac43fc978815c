package results_test

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestValidateSpecDecode: a pinned run's record is checked like the matrix: a known mode, a
// length of at least 1, a known source, and acceptance-pass cells that pass the cell checks
// once each; AcceptanceCell takes a pinned run's acceptance from its pass.
func TestValidateSpecDecode(t *testing.T) {
	cell := func(label string, ctx int) results.DecodeCell {
		c := results.DecodeCell{Context: ctx, ContextLabel: label, Concurrency: 1, Status: results.StatusSkipped}
		return c
	}
	base := func() *results.File {
		return &results.File{Schema: results.SchemaV1, Run: results.Run{Source: results.SourceMeasured, Tool: results.Tool{Name: "speedmatrix"}, Settings: &results.Settings{Endpoint: "completions"}}}
	}
	for _, tc := range []struct {
		name string
		sd   results.SpecDecode
		want string
	}{
		{"fine", results.SpecDecode{Mode: results.SpecDecodePinned, PinnedAcceptanceLength: 3.1, PinnedFrom: results.PinnedFromAcceptance, AcceptancePass: []results.DecodeCell{cell("8K", 8192)}}, ""},
		{"unknown mode", results.SpecDecode{Mode: "fixed"}, `spec_decode.mode "fixed"`},
		{"length below 1", results.SpecDecode{Mode: results.SpecDecodePinned, PinnedAcceptanceLength: 0.5}, "below 1"},
		{"unknown source", results.SpecDecode{Mode: results.SpecDecodePinned, PinnedFrom: "guess"}, `pinned_from "guess"`},
		{"duplicate cell", results.SpecDecode{Mode: results.SpecDecodePinned, AcceptancePass: []results.DecodeCell{cell("8K", 8192), cell("8K", 8192)}}, "duplicate of acceptance_pass[0]"},
		{"bad label", results.SpecDecode{Mode: results.SpecDecodePinned, AcceptancePass: []results.DecodeCell{cell("9K", 8192)}}, "acceptance pass cell 9K×1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := base()
			sd := tc.sd
			f.SpecDecode = &sd
			err := results.Validate(f)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	v := 2.5
	measured := results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: 1, Status: results.StatusValid}
	measured.Telemetry = &results.Telemetry{SpecAcceptanceLength: &v}
	f := base()
	f.Decode = []results.DecodeCell{{Context: 8192, ContextLabel: "8K", Concurrency: 1, Status: results.StatusValid}}
	id := f.Decode[0].ID()
	if c := f.AcceptanceCell(id); c != &f.Decode[0] {
		t.Errorf("unpinned: AcceptanceCell = %v, want the matrix's cell", c)
	}
	f.SpecDecode = &results.SpecDecode{Mode: results.SpecDecodePinned, AcceptancePass: []results.DecodeCell{measured}}
	if c := f.AcceptanceCell(id); c != &f.SpecDecode.AcceptancePass[0] {
		t.Errorf("pinned: AcceptanceCell = %v, want the pass's cell", c)
	}
	if c := f.AcceptanceCell(results.CellID{Phase: results.PhaseDecode, ContextLabel: "32K", Concurrency: 1}); c != nil {
		t.Errorf("pinned, a cell the pass lacks: %v, want nil", c)
	}
}
