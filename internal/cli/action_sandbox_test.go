package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestActionMeasureSandboxAcceptance: the action's measure mode, run as the measure job runs
// it (a pull request's commit, the sha input from the decide job, no token), whose
// engine.serve (then, in a second case, whose engine.build) leaves a detached process that
// reads every process's environment and rewrites the artifact's results.json and meta.json:
// once the action returns, no process of the engine is alive, the ACTIONS_RUNTIME_TOKEN of a
// process started afterwards (actions/upload-artifact's) is not read, and both files are byte
// for byte what speedmatrix wrote. The engine is the simulator, served in the sandbox; the
// artifact directory lies outside its checkout.
func TestActionMeasureSandboxAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and serves the simulator in the sandbox")
	}
	needSandbox(t)
	for _, phase := range []string{"serve", "build"} {
		t.Run(phase, func(t *testing.T) {
			e := newActEnv(t)
			e.simTime = false // the engine is real processes, measured in real time
			art := e.vars["INPUT_ARTIFACT-DIR"]
			resultsPath, metaPath := filepath.Join(art, "results.json"), filepath.Join(art, "meta.json")
			d, head := newDaemonEngine(t, phase, resultsPath, metaPath)
			e.writeConfig(engineMatrix + "paired: {mode: off}\n" + d.yaml)
			e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
			delete(e.vars, "INPUT_TOKEN")
			e.vars["INPUT_MODE"], e.vars["INPUT_SHA"], e.vars["KEY"] = "measure", head, engineKey

			out, stderr, err := e.run(context.Background())
			if err != nil {
				t.Fatalf("action measure: %v\n%s", err, stderr)
			}
			if out["verdict"] == "" {
				t.Errorf("measure outputs %v, want a verdict", out)
			}
			written := map[string][]byte{}
			for _, p := range []string{resultsPath, metaPath} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				written[p] = b
			}
			if _, err := results.ReadFile(resultsPath); err != nil {
				t.Fatalf("the artifact's results as the action returned them: %v", err)
			}
			var m struct {
				HeadSHA string `json:"head_sha"`
			}
			if err := json.Unmarshal(written[metaPath], &m); err != nil || m.HeadSHA != head {
				t.Fatalf("the artifact's meta.json as the action returned it (%v): head %q, want %s\n%s", err, m.HeadSHA, head, written[metaPath])
			}
			d.checkGone(t, written)
		})
	}
}
