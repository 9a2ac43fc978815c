package results_test

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestValidateShard checks that a results file's shard record must name a shard of its plan:
// 1 ≤ index ≤ count, a plan, and context rows that parse.
func TestValidateShard(t *testing.T) {
	for _, tt := range []struct {
		shard results.Shard
		want  string // "" valid
	}{
		{results.Shard{Index: 2, Count: 4, Plan: "p", Contexts: []string{"16K", "512K"}}, ""},
		{results.Shard{Index: 5, Count: 4, Plan: "p", Contexts: []string{"8K"}}, "shard 5 of 4"},
		{results.Shard{Index: 0, Count: 4, Plan: "p", Contexts: []string{"8K"}}, "shard 0 of 4"},
		{results.Shard{Index: 1, Count: 1, Contexts: []string{"8K"}}, "plan is empty"},
		{results.Shard{Index: 1, Count: 1, Plan: "p"}, "contexts is empty"},
		{results.Shard{Index: 1, Count: 1, Plan: "p", Contexts: []string{"lots"}}, `context "lots"`},
	} {
		f := measured()
		s := tt.shard
		f.Run.Shard = &s
		err := results.Validate(f)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.shard, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "run.shard")):
			t.Errorf("%+v: error %v, want one naming run.shard and saying %q", tt.shard, err, tt.want)
		}
	}
}
