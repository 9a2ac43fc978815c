package action

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"
	"go.yaml.in/yaml/v3"

	"github.com/speedmatrix/speedmatrix/ghbot"
)

// actionYML is the part of action.yml the test reads.
type actionYML struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID               string            `yaml:"id"`
			Uses             string            `yaml:"uses"`
			Run              string            `yaml:"run"`
			WorkingDirectory string            `yaml:"working-directory"`
			Env              map[string]string `yaml:"env"`
			With             map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// TestActionYML checks action.yml, which actionlint does not read: a composite action whose
// run: lines hold no ${{ }} expression (inputs reach the program only through INPUT_* in env:),
// whose every input is documented, passed as INPUT_<NAME> and read by the program, and whose
// every output is documented and mapped from the step's output of the same name.
func TestActionYML(t *testing.T) {
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionYML
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using %q, want composite", a.Runs.Using)
	}
	var env map[string]string
	stepID := ""
	built := false
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "${{") {
			t.Errorf("a run: line interpolates an expression: %q", s.Run)
		}
		if strings.Contains(s.Run, "go build") && strings.Contains(s.Run, "./cmd/speedmatrix") && s.WorkingDirectory == "${{ github.action_path }}" {
			built = true
			// On the GPU runner, caches an earlier job (a pull request's code) could write are
			// not trusted: a build cache of the job's own, the module cache verified.
			if !strings.Contains(s.Run, `export GOCACHE="$RUNNER_TEMP/`) || !strings.Contains(s.Run, "go mod verify") || s.Env["SPEEDMATRIX_MODE"] != "${{ inputs.mode }}" {
				t.Errorf("the build in mode measure must use a build cache under RUNNER_TEMP and verify the module cache:\n%s", s.Run)
			}
			// Nothing a pull request's job wrote steers the build: not the go env file
			// (GOFLAGS=-toolexec), not GOFLAGS, not a toolchain download, not the user's caches.
			if s.Env["GOENV"] != "off" || s.Env["GOTOOLCHAIN"] != "local" {
				t.Errorf("the build's env GOENV %q GOTOOLCHAIN %q, want off and local", s.Env["GOENV"], s.Env["GOTOOLCHAIN"])
			}
			if v, ok := s.Env["GOFLAGS"]; !ok || v != "" {
				t.Errorf("the build's env GOFLAGS %q (set %v), want set and empty", v, ok)
			}
			if !strings.Contains(s.Run, `GOMODCACHE="$RUNNER_TEMP/`) || strings.Index(s.Run, "GOMODCACHE") > strings.Index(s.Run, "go mod verify") {
				t.Errorf("the build's module cache must be under RUNNER_TEMP, set before anything runs go:\n%s", s.Run)
			}
		}
		if strings.Contains(s.Run, "\"$SPEEDMATRIX_BIN\" action") {
			env, stepID = s.Env, s.ID
		}
		if strings.Contains(s.Uses, "actions/setup-go") && s.With["cache"] != "false" {
			t.Errorf("%s: cache %q, want false: a Go cache restored on a GPU runner can carry what a pull request's job wrote", s.Uses, s.With["cache"])
		}
	}
	if !built || env == nil || stepID == "" {
		t.Fatalf("action.yml must build ./cmd/speedmatrix in github.action_path and run `speedmatrix action` in a step with an id (built %v, id %q)", built, stepID)
	}
	var names []string
	for name, in := range a.Inputs {
		names = append(names, name)
		if len(strings.TrimSpace(in.Description)) < 10 {
			t.Errorf("input %s is not documented", name)
		}
		key := "INPUT_" + strings.ToUpper(name)
		v, ok := env[key]
		if !ok {
			t.Errorf("input %s is not passed as %s", name, key)
			continue
		}
		if !regexp.MustCompile(`^\$\{\{ .*\binputs\.` + regexp.QuoteMeta(name) + `\b.* \}\}$`).MatchString(v) {
			t.Errorf("%s = %q, want an expression of inputs.%s", key, v, name)
		}
	}
	for _, name := range []string{"token", "app-id", "installation-id", "private-key", "private-key-file"} {
		if w := "${{ inputs.mode != 'measure' && inputs." + name + " || '' }}"; env["INPUT_"+strings.ToUpper(name)] != w {
			t.Errorf("INPUT_%s = %q, want %q: no credential reaches the job that runs pull-request code", strings.ToUpper(name), env["INPUT_"+strings.ToUpper(name)], w)
		}
	}
	for key, v := range env {
		if key == "SPEEDMATRIX_BIN" {
			if v != "${{ steps.binary.outputs.path }}" {
				t.Errorf("SPEEDMATRIX_BIN = %q, want the binary step's path", v)
			}
			continue
		}
		if !strings.HasPrefix(key, "INPUT_") {
			t.Errorf("env %s is not an input", key)
		}
	}
	sort.Strings(names)
	want := slices.Clone(InputNames)
	sort.Strings(want)
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("inputs of action.yml (+) and InputNames (-) differ:\n%s", d)
	}
	// The program reads every input.
	read := map[string]bool{}
	ga := githubactions.New(githubactions.WithGetenv(func(k string) string {
		if n, ok := strings.CutPrefix(k, "INPUT_"); ok {
			read[strings.ToLower(n)] = true
		}
		return ""
	}))
	if _, err := readInputs(ga, ModeFull); err != nil {
		t.Fatal(err)
	}
	if _, err := ghbot.AuthFromInputs(ga); err != nil {
		t.Fatal(err)
	}
	for _, n := range InputNames {
		if !read[n] {
			t.Errorf("input %s is never read", n)
		}
	}
	var outs []string
	for name, o := range a.Outputs {
		outs = append(outs, name)
		if len(strings.TrimSpace(o.Description)) < 10 {
			t.Errorf("output %s is not documented", name)
		}
		if w := "${{ steps." + stepID + ".outputs." + name + " }}"; o.Value != w {
			t.Errorf("output %s = %q, want %q", name, o.Value, w)
		}
	}
	sort.Strings(outs)
	wantOuts := slices.Clone(OutputNames)
	sort.Strings(wantOuts)
	if d := cmp.Diff(wantOuts, outs); d != "" {
		t.Errorf("outputs of action.yml (+) and OutputNames (-) differ:\n%s", d)
	}
}
