package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const serveYAML = "engine:\n  serve:\n    command: [vllm, serve, m]\n"

// TestSpecDecode: spec_decode is a mode or a mapping; pinned needs engine.serve; a bad mode,
// length, concurrency or context is an error at its line.
func TestSpecDecode(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      SpecDecode
		err       string
	}{
		{"absent", serveYAML, SpecDecode{}, ""},
		{"scalar", "spec_decode: pinned\n" + serveYAML, SpecDecode{Mode: SpecDecodePinned}, ""},
		{"mapping", "spec_decode: {mode: pinned, acceptance_length: 3.1, acceptance_contexts: [8K, 128K], acceptance_trials: 5, acceptance_duration: 20s}\n" + serveYAML,
			SpecDecode{Mode: SpecDecodePinned, AcceptanceLength: 3.1, AcceptanceContexts: List{"8K", "128K"}, AcceptanceTrials: 5, AcceptanceDuration: 20e9}, ""},
		{"as launched", "spec_decode: as_launched\n", SpecDecode{Mode: SpecDecodeAsLaunched}, ""},
		{"unknown mode", "spec_decode: fixed\n" + serveYAML, SpecDecode{}, `speedmatrix.yaml:1:14: spec_decode: "fixed": want as_launched or pinned`},
		{"pinned without serve", "spec_decode: pinned\n", SpecDecode{}, "spec_decode: pinned needs engine.serve"},
		{"length below 1", "spec_decode: {mode: pinned, acceptance_length: 0.5}\n" + serveYAML, SpecDecode{}, "spec_decode.acceptance_length: 0.5: want at least 1"},
		{"bad context", "spec_decode: {mode: pinned, acceptance_contexts: [8Q]}\n" + serveYAML, SpecDecode{}, "spec_decode.acceptance_contexts[0]"},
		{"negative trials", "spec_decode: {mode: pinned, acceptance_trials: -1}\n" + serveYAML, SpecDecode{}, "spec_decode.acceptance_trials: -1"},
		{"a list", "spec_decode: [pinned]\n", SpecDecode{}, "spec_decode: want as_launched, pinned or {mode: pinned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			err := Parse("speedmatrix.yaml", []byte(tc.doc), &c)
			if err == nil {
				err = c.Validate()
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.SpecDecode); diff != "" {
				t.Errorf("spec_decode (-want +got):\n%s", diff)
			}
		})
	}
	if s := (SpecDecode{}); s.PassConcurrency() != 1 || s.PassTrials() != 3 || s.Pinned() {
		t.Errorf("defaults: concurrency %d, trials %d, pinned %v; want 1, 3, false", s.PassConcurrency(), s.PassTrials(), s.Pinned())
	}
}
