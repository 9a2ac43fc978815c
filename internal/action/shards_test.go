package action

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"
)

// TestReadShardInputs: the shards inputs are checked where they are read: a number of shards,
// K/N with K ≤ N, a plan id of hex digits and only with a shard, each in the mode that uses it.
func TestReadShardInputs(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want Inputs // Shards, Shard, Plan, ShardArtifacts
		err  string
	}{
		{env: map[string]string{"INPUT_MODE": "decide", "INPUT_SHARDS": "4"}, want: Inputs{Shards: 4}},
		{env: map[string]string{"INPUT_MODE": "measure", "INPUT_SHARD": "2/4", "INPUT_PLAN": "f211851d55bb"}, want: Inputs{Shard: "2/4", Plan: "f211851d55bb"}},
		{env: map[string]string{"INPUT_MODE": "report", "INPUT_SHARD-ARTIFACTS": "shards/speedmatrix-*"}, want: Inputs{ShardArtifacts: "shards/speedmatrix-*"}},
		{env: map[string]string{"INPUT_MODE": "decide", "INPUT_SHARDS": "-1"}, err: "input shards"},
		{env: map[string]string{"INPUT_MODE": "decide", "INPUT_SHARDS": "257"}, err: "from 0 to 256"},
		{env: map[string]string{"INPUT_MODE": "measure", "INPUT_SHARD": "5/4"}, err: "shard 5 of 4 does not exist"},
		{env: map[string]string{"INPUT_MODE": "measure", "INPUT_SHARD": "0/4"}, err: "is not K/N"},
		{env: map[string]string{"INPUT_MODE": "measure", "INPUT_SHARD": "1/4; id"}, err: "is not K/N"},
		{env: map[string]string{"INPUT_MODE": "measure", "INPUT_SHARD": "1/4", "INPUT_PLAN": "$(id)"}, err: "is not a plan id"},
		{env: map[string]string{"INPUT_MODE": "measure", "INPUT_PLAN": "f211851d55bb"}, err: "needs the shard input"},
		{env: map[string]string{"INPUT_MODE": "full", "INPUT_SHARD": "1/4"}, err: "input shard is for mode measure"},
		{env: map[string]string{"INPUT_MODE": "full", "INPUT_SHARDS": "4"}, err: "input shards is for mode decide"},
		{env: map[string]string{"INPUT_MODE": "measure", "INPUT_SHARD-ARTIFACTS": "x"}, err: "for mode report"},
		{env: map[string]string{"INPUT_MODE": "report", "INPUT_SHARD-ARTIFACTS": "a\nb"}, err: "line break"},
	} {
		a := githubactions.New(githubactions.WithGetenv(func(k string) string { return tt.env[k] }))
		in, err := readInputs(a, "")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want one saying %q", tt.env, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tt.env, err)
			continue
		}
		got := Inputs{Shards: in.Shards, Shard: in.Shard, Plan: in.Plan, ShardArtifacts: in.ShardArtifacts}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.env, diff)
		}
	}
}
