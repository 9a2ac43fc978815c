package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseSpecConfig: the simulator reads vLLM's --speculative-config: synthetic with a length
// pins acceptance, the standard and block methods and configs without the key do not, and
// what it cannot honour is an error that says what to give.
func TestParseSpecConfig(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SpecConfig
		err  bool
	}{
		{"", SpecConfig{}, false},
		{`{"method":"dflash","num_speculative_tokens":7}`, SpecConfig{}, false},
		{`{"num_speculative_tokens":7,"rejection_sample_method":"standard"}`, SpecConfig{}, false},
		{`{"rejection_sample_method":"synthetic","synthetic_acceptance_length":3.12,"moe_backend":"triton"}`, SpecConfig{PinnedAcceptanceLength: 3.12}, false},
		{`{"rejection_sample_method": "synthetic", "synthetic_acceptance_length": 1}`, SpecConfig{PinnedAcceptanceLength: 1}, false},
		{`{"rejection_sample_method":"synthetic"}`, SpecConfig{}, true},
		{`{"rejection_sample_method":"synthetic","synthetic_acceptance_rates":[0.9,0.8]}`, SpecConfig{}, true},
		{`{"rejection_sample_method":"synthetic","synthetic_acceptance_length":0.5}`, SpecConfig{}, true},
		{`{"rejection_sample_method":"magic"}`, SpecConfig{}, true},
		{`{num_speculative_tokens: 7}`, SpecConfig{}, true},
	} {
		got, err := ParseSpecConfig(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%s: err %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}

// FuzzParseSpecConfig: any input is parsed or refused, never a panic, and a pinned length is
// always at least 1.
func FuzzParseSpecConfig(f *testing.F) {
	f.Add(`{"rejection_sample_method":"synthetic","synthetic_acceptance_length":3.12}`)
	f.Add(`{"num_speculative_tokens":7}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := ParseSpecConfig(s)
		if err == nil && sc.PinnedAcceptanceLength != 0 && !(sc.PinnedAcceptanceLength >= 1) {
			t.Fatalf("%q: pinned length %g", s, sc.PinnedAcceptanceLength)
		}
	})
}
