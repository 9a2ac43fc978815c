package action

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot"
)

// TestMeasureConfigTrust: only a push to the default branch builds at the trusted level; every
// run of other code builds apart (engine.BuildSpec.Trust).
func TestMeasureConfigTrust(t *testing.T) {
	for kind, want := range map[ghbot.RunKind]string{
		ghbot.RunBaseline: "trusted", ghbot.RunPullRequest: "untrusted", ghbot.RunCommand: "untrusted",
		ghbot.RunMergeGroup: "untrusted", ghbot.RunDispatch: "untrusted",
	} {
		if got := (&job{}).measureConfig(plan{Kind: kind, HeadSHA: "abc"}).Engine.Trust; got != want {
			t.Errorf("%s: engine trust %q, want %q", kind, got, want)
		}
	}
}
