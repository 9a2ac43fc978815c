package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/speedmatrix/speedmatrix/results"
)

const schemaPath = "schema/speedmatrix-v1.schema.json"

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(schemaPath)
	if err != nil {
		t.Fatalf("the JSON Schema does not compile: %v", err)
	}
	return sch
}

// schemaValidate checks a YAML document against the schema, as an editor would.
func schemaValidate(t *testing.T, sch *jsonschema.Schema, doc []byte) error {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		t.Fatalf("not YAML: %v", err)
	}
	if v == nil {
		v = map[string]any{}
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("YAML to JSON: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// readmeExample returns the commented speedmatrix.yaml of the configuration reference,
// docs/configuration.md: its first ```yaml block.
func readmeExample(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n```yaml\n(.*?)```").FindSubmatch(data)
	if m == nil {
		t.Fatal("docs/configuration.md has no ```yaml block")
	}
	return m[1]
}

// TestExamplesValidate checks that the README's example and every testdata example pass both
// the JSON Schema and Load.
func TestExamplesValidate(t *testing.T) {
	sch := compileSchema(t)
	docs := map[string][]byte{"docs/configuration.md": readmeExample(t)}
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if len(paths) < 3 {
		t.Fatalf("testdata holds %d examples, want at least 3", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[p] = data
	}
	for name, doc := range docs {
		if err := schemaValidate(t, sch, doc); err != nil {
			t.Errorf("%s: the schema rejects it: %v", name, err)
		}
		c := Default()
		if err := Parse(name, doc, &c); err != nil {
			t.Errorf("%s: Parse: %v", name, err)
		} else if err := c.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", name, err)
		}
	}
}

// TestReadmeExampleHasEveryKey checks that the configuration reference's example sets every key of the file, so
// that each is documented by a comment there.
func TestReadmeExampleHasEveryKey(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(readmeExample(t), &doc); err != nil {
		t.Fatal(err)
	}
	var given []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			given = append(given, join(prefix, k))
			if sub, ok := v.(map[string]any); ok && !strings.HasSuffix(join(prefix, k), ".env") && !strings.HasSuffix(join(prefix, k), ".thresholds") {
				walk(join(prefix, k), sub)
			}
		}
	}
	walk("", doc)
	for _, k := range goKeys(reflect.TypeFor[Config](), "") {
		if !slices.Contains(given, k) {
			t.Errorf("docs/configuration.md's example does not show %s", k)
		}
	}
}

// goKeys lists the dotted keys of a struct type, its nested sections' included.
func goKeys(t reflect.Type, prefix string) []string {
	var out []string
	for _, f := range fields(reflect.New(t).Elem()) {
		k := join(prefix, f.key)
		out = append(out, k)
		ft := f.v.Type()
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != buildType {
			out = append(out, goKeys(ft, k)...)
		}
	}
	return out
}

// schemaKeys lists the dotted keys of the schema's object sections.
func schemaKeys(t *testing.T, node map[string]any, prefix string, goStruct func(string) bool) []string {
	props, _ := node["properties"].(map[string]any)
	if node["additionalProperties"] != false {
		t.Errorf("schema %q: additionalProperties is not false (unknown keys must be errors)", prefix)
	}
	var out []string
	for k, v := range props {
		key := join(prefix, k)
		out = append(out, key)
		if sub, ok := v.(map[string]any); ok && goStruct(key) {
			out = append(out, schemaKeys(t, sub, key, goStruct)...)
		}
	}
	return out
}

// TestSchemaMatchesGoTypes walks the Go types and the schema together: both must hold the same
// keys at every level, so a key added to one and not the other fails here.
func TestSchemaMatchesGoTypes(t *testing.T) {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var sch map[string]any
	if err := json.Unmarshal(data, &sch); err != nil {
		t.Fatal(err)
	}
	goSide := goKeys(reflect.TypeFor[Config](), "")
	structs := map[string]bool{}
	for _, k := range goSide {
		structs[k] = true
	}
	isStruct := func(k string) bool {
		for _, g := range goSide {
			if strings.HasPrefix(g, k+".") {
				return true
			}
		}
		return false
	}
	schemaSide := schemaKeys(t, sch, "", isStruct)
	slices.Sort(goSide)
	slices.Sort(schemaSide)
	if d := cmp.Diff(goSide, schemaSide); d != "" {
		t.Errorf("keys of the Go types (-) and of the schema (+) differ:\n%s", d)
	}
	// The thresholds' keys are the compared metrics.
	th := sch["properties"].(map[string]any)["compare"].(map[string]any)["properties"].(map[string]any)["thresholds"].(map[string]any)["properties"].(map[string]any)
	var metrics []string
	for _, p := range []results.Phase{results.PhaseDecode, results.PhasePrefill} {
		for _, m := range results.Metrics(p) {
			if !slices.Contains(metrics, string(m)) {
				metrics = append(metrics, string(m))
			}
		}
	}
	var got []string
	for k := range th {
		got = append(got, k)
	}
	slices.Sort(metrics)
	slices.Sort(got)
	if d := cmp.Diff(metrics, got); d != "" {
		t.Errorf("compare.thresholds in the schema (+) and the metrics (-) differ:\n%s", d)
	}
}

// TestSchemaAndLoadReject checks that both refuse what is wrong in the file's shape.
func TestSchemaAndLoadReject(t *testing.T) {
	sch := compileSchema(t)
	for _, doc := range []string{
		"max_tokenz: 5\n",
		"matrix: huge\n",
		"engine:\n  serve:\n    comand: [a]\n",
		"engine:\n  build: fast\n",
		"engine:\n  build: {command: make, shell: bash}\n",
		"engine:\n  serve:\n    command: vllm serve m\n",
		"engine:\n  serve:\n    command: [a]\n    port: abc\n",
		"duration: soon\n",
		"github: {comment: sometimes}\n",
		"github: {undecided: maybe}\n",
		"github: {merge_queue: always}\n",
		"github: {no_baseline: maybe}\n",
		"compare: {thresholds: {speed: 0.1}}\n",
		"gpu: {lock_clocks: maybe}\n",
		"store: {retention: {keep: -1}}\n",
		"store: {retention: {pr_days: -5}}\n",
		"store: {aa_every: -1}\n",
		"store: {min_history: 1}\n",
		"store: {retention: {keep_days: 3}}\n",
	} {
		if err := schemaValidate(t, sch, []byte(doc)); err == nil {
			t.Errorf("the schema accepts %q", doc)
		}
		c := Default()
		err := Parse("f", []byte(doc), &c)
		if err == nil {
			err = c.Validate()
		}
		if err == nil {
			t.Errorf("Parse and Validate accept %q", doc)
		}
	}
}
