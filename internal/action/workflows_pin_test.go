package action

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExamplesAppAndPin: in the example workflows every step of the action that holds a token
// (decide, report, cleanup, pages) authenticates as the GitHub App by default (app-id,
// installation-id, private-key: ghbot's ghinstallation transport), so that the check branch
// protection requires is the App's, which no workflow job can make (issue 34, item 5); every
// report passes the decide job's cells (what to compare is decided, never read from the
// artifact); and every use of the action names the release that release/TAG says, as a tag
// or as a commit with the version beside it (issue 35, item 2).
func TestExamplesAppAndPin(t *testing.T) {
	tag, err := os.ReadFile("../../release/TAG")
	if err != nil {
		t.Fatalf("release/TAG: %v", err)
	}
	version := strings.TrimSpace(string(tag))
	pinned := regexp.MustCompile(`^\s*(?:- )?(?:uses: )speedmatrix/speedmatrix@(` + regexp.QuoteMeta(version) + `|[0-9a-f]{40})\s+#\s*(.*)$`)
	for _, name := range []string{"example-gpu.yml", "example-gpu-sharded.yml"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("../../.github/workflows", name)
			w, text := readWorkflow(t, path)
			for id, j := range w.Jobs {
				for _, s := range j.Steps {
					if !strings.HasPrefix(s.Uses, "speedmatrix/speedmatrix@") {
						continue
					}
					switch s.With["mode"] {
					case "decide", "report", "cleanup", "pages":
						for k, want := range map[string]string{
							"app-id":          "${{ vars.SPEEDMATRIX_APP_ID }}",
							"installation-id": "${{ vars.SPEEDMATRIX_APP_INSTALLATION_ID }}",
							"private-key":     "${{ secrets.SPEEDMATRIX_APP_PRIVATE_KEY }}",
						} {
							if s.With[k] != want {
								t.Errorf("job %s, mode %s: %s %q, want %s (the App by default)", id, s.With["mode"], k, s.With[k], want)
							}
						}
					}
					if s.With["mode"] == "report" && s.With["bisect"] == "" && s.With["cells"] != "${{ needs.decide.outputs.cells }}" {
						t.Errorf("job %s: report without the decide job's cells (cells %q)", id, s.With["cells"])
					}
				}
			}
			n := 0
			for i, line := range strings.Split(text, "\n") {
				if !strings.Contains(line, "uses: speedmatrix/speedmatrix@") {
					continue
				}
				n++
				m := pinned.FindStringSubmatch(line)
				switch {
				case m == nil:
					t.Errorf("%s:%d: %q: want speedmatrix/speedmatrix@%s or @<commit>  # %s", name, i+1, strings.TrimSpace(line), version, version)
				case m[1] != version && !strings.HasPrefix(m[2], version):
					t.Errorf("%s:%d: a commit without its version %s beside it", name, i+1, version)
				}
			}
			if n == 0 {
				t.Errorf("%s uses no speedmatrix/speedmatrix@", name)
			}
		})
	}
}

// TestREADMEStep2 (issue 35, item 7): the README's step 2, which says what to change in a copy of
// the example workflow, names every job that runs on the self-hosted runner (each has
// runs-on labels to change: measure and bisect) and how many uses: of the action to pin, and
// docs/install.md says the same.
func TestREADMEStep2(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "2. **The workflow.**")
	k := strings.Index(text, "3. **")
	if i < 0 || k < i {
		t.Fatal("README.md has no step 2, **The workflow.**")
	}
	step := strings.Join(strings.Fields(text[i:k]), " ")
	install, err := os.ReadFile("../../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	inst := strings.Join(strings.Fields(string(install)), " ")
	for _, name := range []string{"example-gpu.yml", "example-gpu-sharded.yml"} {
		w, raw := readWorkflow(t, filepath.Join("../../.github/workflows", name))
		for id, j := range w.Jobs {
			if selfHosted(j.RunsOn) && !strings.Contains(step, "`"+id+"`") {
				t.Errorf("README step 2 does not name the GPU job %s of %s, whose runs-on labels a copy changes", id, name)
			}
			if selfHosted(j.RunsOn) && !strings.Contains(inst, "`"+id+"`") {
				t.Errorf("docs/install.md does not name the GPU job %s of %s", id, name)
			}
		}
		n := strings.Count(raw, "uses: speedmatrix/speedmatrix@")
		if want := fmt.Sprintf("%d `uses:", n); !strings.Contains(step, want) {
			t.Errorf("README step 2 does not say that %s has %d uses: of the action to pin (%q)", name, n, want)
		}
	}
}
