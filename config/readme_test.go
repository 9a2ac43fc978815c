package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// readmeBlock is one ```yaml block of README.md or a page of docs/.
type readmeBlock struct {
	Line    int    // the line of its first YAML line
	Section string // the nearest heading above it
	Doc     []byte // its text, without the fence's indentation
}

// readmeYAMLBlocks returns every ```yaml block of a markdown file, also those indented inside a
// list item (the quick start's), with the heading each stands under.
func readmeYAMLBlocks(readme []byte) []readmeBlock {
	var out []readmeBlock
	lines := strings.Split(string(readme), "\n")
	section := ""
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "#") {
			section = strings.TrimSpace(strings.TrimLeft(lines[i], "#"))
			continue
		}
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " "))]
		b := readmeBlock{Line: i + 2, Section: section}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		b.Doc = []byte(strings.Join(body, "\n") + "\n")
		out = append(out, b)
	}
	return out
}

// isWorkflow reports whether a YAML document is a GitHub Actions workflow (it has jobs).
func isWorkflow(doc []byte) bool {
	var m map[string]any
	if yaml.Unmarshal(doc, &m) != nil {
		return false
	}
	_, ok := m["jobs"]
	return ok
}

// checkReadmeYAML returns what is wrong with the ```yaml blocks of README.md: each must be a
// speedmatrix.yaml that the JSON Schema and Parse/Validate accept, or a workflow quoted verbatim
// from one of workflows (name → content), so that no copy drifts from what actionlint and the
// config reader check. The quick start must hold a speedmatrix.yaml.
func checkReadmeYAML(t *testing.T, sch *jsonschema.Schema, readme []byte, workflows map[string]string) []error {
	t.Helper()
	errs, quickStart := checkDocYAML(t, sch, "README.md", readme, workflows)
	if !quickStart {
		errs = append(errs, errors.New("README.md: no ```yaml block (speedmatrix.yaml) in the \"Quick start\" section"))
	}
	return errs
}

// checkDocYAML returns what is wrong with the ```yaml blocks of the markdown file name (as
// checkReadmeYAML says) and whether one speedmatrix.yaml stands in a "Quick start" section.
func checkDocYAML(t *testing.T, sch *jsonschema.Schema, name string, readme []byte, workflows map[string]string) (errs []error, quickStart bool) {
	t.Helper()
	for _, b := range readmeYAMLBlocks(readme) {
		where := fmt.Sprintf("%s:%d (%s)", name, b.Line, b.Section)
		if isWorkflow(b.Doc) {
			found := false
			for _, w := range workflows {
				found = found || strings.Contains(w, string(b.Doc))
			}
			if !found {
				errs = append(errs, fmt.Errorf("%s: a workflow that is not a verbatim part of any file of .github/workflows: link the file instead of copying it", where))
			}
			continue
		}
		if strings.HasPrefix(b.Section, "Quick start") {
			quickStart = true
		}
		if err := schemaValidate(t, sch, b.Doc); err != nil {
			errs = append(errs, fmt.Errorf("%s: the schema rejects it: %v", where, err))
		}
		c := Default()
		if err := Parse(where, b.Doc, &c); err != nil {
			errs = append(errs, fmt.Errorf("Parse: %w", err))
		} else if err := c.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: Validate: %w", where, err))
		}
	}
	return errs, quickStart
}

// readWorkflows returns the repository's workflow files by name.
func readWorkflows(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("../.github/workflows/*.yml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no workflows under ../.github/workflows (%v)", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

// userDocs returns README.md and every page of docs/ by path (relative to the repository).
func userDocs(t testing.TB) map[string][]byte {
	t.Helper()
	paths, _ := filepath.Glob("../docs/*.md")
	out := map[string][]byte{}
	for _, p := range append([]string{"../README.md"}, paths...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(p, "../")] = b
	}
	return out
}

// TestReadmeYAMLBlocks checks every ```yaml block of README.md and docs/*.md, the quick start's
// speedmatrix.yaml and the configuration reference included: each passes the JSON Schema and
// Parse/Validate, or is a workflow quoted verbatim from .github/workflows (which actionlint
// checks in .ci/run).
func TestReadmeYAMLBlocks(t *testing.T) {
	sch, workflows := compileSchema(t), readWorkflows(t)
	n := 0
	for name, doc := range userDocs(t) {
		n += len(readmeYAMLBlocks(doc))
		var errs []error
		if name == "README.md" {
			errs = checkReadmeYAML(t, sch, doc, workflows)
		} else {
			errs, _ = checkDocYAML(t, sch, name, doc, workflows)
		}
		for _, err := range errs {
			t.Error(err)
		}
	}
	if n < 4 {
		t.Fatalf("found %d ```yaml blocks in README.md and docs/; the extraction is broken", n)
	}
}

// TestReadmeYAMLCheckCatches is the check's own control: a quick start whose speedmatrix.yaml
// has an unknown key, a wrong value, or no speedmatrix.yaml at all, and a workflow that is not
// the file's, are each reported.
func TestReadmeYAMLCheckCatches(t *testing.T) {
	sch := compileSchema(t)
	workflows := map[string]string{"w.yml": "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps: [{run: 'true'}]\n"}
	for _, tc := range []struct {
		name, readme string
		want         *regexp.Regexp
	}{
		{"unknown key", "## Quick start for a GPU repository\n\n3. It:\n\n   ```yaml\n   engine:\n     serve:\n       comand: [vllm, serve, m]\n   ```\n",
			regexp.MustCompile(`README.md:6 \(Quick start for a GPU repository\): the schema rejects it(?s:.*)unknown key "comand"`)},
		{"bad value", "## Quick start\n\n```yaml\nmatrix: huge\n```\n", regexp.MustCompile(`Validate: .*matrix "huge" unknown`)},
		{"no quick start config", "## Quick start\n\nnothing\n\n## Configuration\n\n```yaml\nmatrix: quick\n```\n", regexp.MustCompile(`no .*yaml block .* "Quick start"`)},
		{"drifted workflow", "## Quick start\n\n```yaml\nmatrix: quick\n```\n\n```yaml\non: push\njobs:\n  a:\n    runs-on: self-hosted\n```\n", regexp.MustCompile(`README.md:8 .*not a verbatim part`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []string
			for _, err := range checkReadmeYAML(t, sch, []byte(tc.readme), workflows) {
				msgs = append(msgs, err.Error())
			}
			if got := strings.Join(msgs, "\n"); !tc.want.MatchString(got) {
				t.Errorf("errors:\n%s\nwant a match of %s", got, tc.want)
			}
		})
	}
	// A workflow quoted as it is in the file passes.
	ok := "## Quick start\n\n```yaml\nmatrix: quick\n```\n\n```yaml\n" + workflows["w.yml"] + "```\n"
	if errs := checkReadmeYAML(t, sch, []byte(ok), workflows); len(errs) > 0 {
		t.Errorf("a verbatim workflow and a valid config: %v", errs)
	}
}
