package action

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a workflow file the trust tests read.
type workflow struct {
	On          map[string]yaml.Node `yaml:"on"`
	Permissions yaml.Node            `yaml:"permissions"`
	Concurrency yaml.Node            `yaml:"concurrency"`
	Jobs        map[string]struct {
		Needs       yaml.Node         `yaml:"needs"`
		If          string            `yaml:"if"`
		RunsOn      yaml.Node         `yaml:"runs-on"`
		Permissions map[string]string `yaml:"permissions"`
		Concurrency struct {
			Group            string `yaml:"group"`
			CancelInProgress string `yaml:"cancel-in-progress"`
		} `yaml:"concurrency"`
		Strategy struct {
			Matrix string `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, path string) (workflow, string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return w, string(b)
}

// selfHosted reports whether a runs-on value can pick a self-hosted (GPU) runner: a label list
// or a group.
func selfHosted(n yaml.Node) bool {
	var s string
	if n.Decode(&s) == nil {
		return s == "self-hosted" || strings.Contains(s, "h200")
	}
	return true // a list of labels or a runner group: only GitHub-hosted runners are named by one string
}

var pinnedUses = regexp.MustCompile(`^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$`)

// TestGPUWorkflowsTrust checks the trust model of the shipped GPU workflows, which are
// properties of the files (a runner runs whatever it is given): no trigger whose workflow a pull
// request defines can start them; the jobs on a GPU runner are the measure job and a bisection
// round's jobs, gated by decide (the commit it pinned, or the round's commits of the default
// branch it chose), with a read-only token, no secret and no persisted credentials; no group a
// reader's comment joins can cancel a measurement, and a push's or a bisection's never is; the
// bisection's report job (no GPU) records the round and dispatches the next; every action of
// GitHub's is pinned to a commit; setup-go caches nothing.
func TestGPUWorkflowsTrust(t *testing.T) {
	for _, name := range []string{"example-gpu.yml", "example-gpu-sharded.yml"} {
		t.Run(name, func(t *testing.T) {
			w, _ := readWorkflow(t, filepath.Join("../../.github/workflows", name))
			for trigger := range w.On {
				switch trigger {
				case "pull_request_target", "issue_comment", "push", "merge_group", "workflow_dispatch":
				default:
					t.Errorf("trigger %s: its workflow is not the default branch's, so a pull request could define the GPU job", trigger)
				}
			}
			if _, ok := w.On["pull_request_target"]; !ok {
				t.Errorf("no pull_request_target: pull requests are never measured")
			}
			if !w.Concurrency.IsZero() {
				t.Errorf("a workflow-level concurrency group: any comment's run joins it and can cancel the measurement")
			}
			gpuJobs := 0
			for id, j := range w.Jobs {
				for _, s := range j.Steps {
					if s.Uses != "" && !strings.HasPrefix(s.Uses, "speedmatrix/speedmatrix@") && !strings.HasPrefix(s.Uses, "./") && !pinnedUses.MatchString(s.Uses) {
						t.Errorf("job %s: %s is not pinned to a commit", id, s.Uses)
					}
					if strings.HasPrefix(s.Uses, "speedmatrix/speedmatrix@") && s.With["mode"] == "" {
						t.Errorf("job %s: a speedmatrix step without mode", id)
					}
					if strings.Contains(s.Uses, "actions/setup-go") && s.With["cache"] != "false" {
						t.Errorf("job %s: setup-go with cache %q", id, s.With["cache"])
					}
					if strings.Contains(s.Uses, "actions/checkout") && s.With["persist-credentials"] != "false" {
						t.Errorf("job %s: checkout persists its credentials", id)
					}
				}
				if !selfHosted(j.RunsOn) {
					continue
				}
				gpuJobs++
				var needs []string
				if j.Needs.Decode(&needs) != nil {
					var one string
					j.Needs.Decode(&one)
					needs = []string{one}
				}
				// The commit each GPU job checks out: the one decide pinned, or (a bisection round)
				// its matrix entry's, which decide chose on the default branch.
				gate, ref := "needs.decide.outputs.run == 'true'", "${{ needs.decide.outputs.sha }}"
				if id == "bisect" {
					gate, ref = "needs.decide.outputs.bisect-matrix != ''", "${{ matrix.commit }}"
					if j.Strategy.Matrix != "${{ fromJSON(needs.decide.outputs.bisect-matrix) }}" {
						t.Errorf("GPU job %s: matrix %q, want decide's bisect-matrix", id, j.Strategy.Matrix)
					}
				}
				if len(needs) != 1 || needs[0] != "decide" || !strings.Contains(j.If, gate) {
					t.Errorf("GPU job %s: needs %v, if %q: it must run only when decide says so", id, needs, j.If)
				}
				if len(j.Permissions) != 1 || j.Permissions["contents"] != "read" {
					t.Errorf("GPU job %s: permissions %v, want contents: read alone", id, j.Permissions)
				}
				measured := false
				for _, s := range j.Steps {
					for k, v := range s.With {
						if strings.Contains(v, "secrets.") {
							t.Errorf("GPU job %s passes a secret as %s", id, k)
						}
					}
					for k, v := range s.Env {
						if strings.Contains(v, "secrets.") {
							t.Errorf("GPU job %s passes a secret as %s", id, k)
						}
					}
					if strings.Contains(s.Uses, "actions/checkout") && s.With["ref"] != ref {
						t.Errorf("GPU job %s checks out %q, not %s", id, s.With["ref"], ref)
					}
					if strings.HasPrefix(s.Uses, "speedmatrix/speedmatrix@") {
						measured = s.With["mode"] == "measure"
						for _, k := range []string{"token", "app-id", "private-key", "private-key-file", "installation-id"} {
							if s.With[k] != "" {
								t.Errorf("GPU job %s passes %s to the action", id, k)
							}
						}
					}
				}
				if !measured {
					t.Errorf("GPU job %s does not use the action in mode measure", id)
				}
				g := j.Concurrency.Group
				if id == "bisect" {
					if !strings.Contains(g, "needs.decide.outputs.bisect") || !strings.Contains(g, "matrix.index") || j.Concurrency.CancelInProgress != "false" {
						t.Errorf("GPU job %s: concurrency group %q, cancel-in-progress %q: want a group of its round and commit that nothing cancels", id, g, j.Concurrency.CancelInProgress)
					}
					continue
				}
				if g == "" || strings.Contains(g, "comment") || !strings.Contains(g, "needs.decide.outputs.pr") || !strings.Contains(g, "needs.decide.outputs.sha") {
					t.Errorf("GPU job %s: concurrency group %q, want one keyed by the decided pull request, else the commit", id, g)
				}
				if j.Concurrency.CancelInProgress != "${{ needs.decide.outputs.pr != '0' }}" {
					t.Errorf("GPU job %s: cancel-in-progress %q: a push's measurement must never be cancelled", id, j.Concurrency.CancelInProgress)
				}
				if strings.Contains(name, "sharded") && !strings.Contains(g, "matrix.index") {
					t.Errorf("GPU job %s: shards share the group %q and would cancel each other", id, g)
				}
			}
			if gpuJobs != 2 {
				t.Errorf("%d jobs can reach a GPU runner, want the measure job and the bisection round's", gpuJobs)
			}
			br := w.Jobs["bisect-report"]
			if selfHosted(br.RunsOn) || br.Permissions["actions"] != "write" || !strings.Contains(br.If, "needs.decide.outputs.bisect != ''") || !strings.Contains(br.If, "needs.decide.result == 'success'") {
				t.Errorf("bisect-report: runs-on %v, permissions %v, if %q: want a GitHub-hosted job that may dispatch the next round, after every round decide planned and never when decide did not run", br.RunsOn.Value, br.Permissions, br.If)
			}
			reported := false
			for _, s := range br.Steps {
				reported = reported || strings.HasPrefix(s.Uses, "speedmatrix/speedmatrix@") && s.With["mode"] == "report" && s.With["bisect"] == "${{ needs.decide.outputs.bisect }}"
			}
			if !reported {
				t.Errorf("bisect-report does not report the round decide planned (mode report, bisect: needs.decide.outputs.bisect)")
			}
		})
	}
}
