package results_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// sampleComparison compares two synthetic runs, the second with a slower 16K row, with a history
// of ten base runs (so that the slowdown is a regression, not unproven).
func sampleComparison(t testing.TB) *results.Comparison {
	t.Helper()
	m := calibrate.NewMatrix(21, 1)
	r := rand.New(rand.NewPCG(21, 1))
	var hist []*results.File
	for i := range 10 {
		hist = append(hist, m.Run(r, fmt.Sprint("hist-", i), nil))
	}
	c, err := compare.Compare(compare.Input{
		History: hist,
		Base:    []*results.File{m.Run(r, "b", nil)},
		Head:    []*results.File{m.Run(r, "h", &calibrate.Slowdown{ContextLabel: "16K", RateFactor: 0.9, TTFTFactor: 1.2})},
	}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestComparisonSchema(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile("schema/comparison-v1.schema.json")
	if err != nil {
		t.Fatalf("the comparison JSON Schema does not compile: %v", err)
	}
	data, err := results.EncodeComparison(sampleComparison(t))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("a written comparison does not satisfy the schema: %v", err)
	}
	// The schema rejects what the reader rejects: an unknown verdict.
	bad := bytes.Replace(data, []byte(`"verdict": "regression"`), []byte(`"verdict": "worse"`), 1)
	inst, _ = jsonschema.UnmarshalJSON(bytes.NewReader(bad))
	if err := sch.Validate(inst); err == nil {
		t.Error("schema accepted verdict \"worse\"")
	}
	if _, err := results.DecodeComparison(bad); err == nil {
		t.Error("reader accepted verdict \"worse\"")
	}
}

func TestComparisonFileRoundTrip(t *testing.T) {
	c := sampleComparison(t)
	path := filepath.Join(t.TempDir(), "comparison.json")
	if err := results.WriteComparisonFile(path, c); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadComparisonFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c, back); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("atomic write left %d files", len(entries))
	}
	// Writing an invalid comparison fails and leaves the old file.
	c.Schema = "nope"
	if err := results.WriteComparisonFile(path, c); err == nil {
		t.Error("wrote an invalid comparison")
	}
	if _, err := results.ReadComparisonFile(path); err != nil {
		t.Errorf("the old file was damaged: %v", err)
	}
}

func TestComparisonRejects(t *testing.T) {
	good, err := results.EncodeComparison(sampleComparison(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"schema", `"speedmatrix/comparison/v1"`, `"speedmatrix/comparison/v9"`, "schema"},
		{"unknown field", `"verdict":`, `"verdikt": 1, "verdict":`, "unknown field"},
		{"bad cell", `"cell": "decode/8K/1"`, `"cell": "decode/8K/zero"`, "concurrency"},
		{"bad p", `"p": 0.`, `"p": 1.`, "not a probability"},
		{"metric", `"metric": "ttft_ms"`, `"metric": "speed"`, "unknown metric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(strings.Replace(string(good), tc.old, tc.new, 1))
			if bytes.Equal(data, good) {
				t.Fatalf("replacement %q not found", tc.old)
			}
			_, err := results.DecodeComparison(data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	for _, in := range []string{"", "{", "[]", `{"schema": "speedmatrix/comparison/v1"} {}`} {
		if _, err := results.DecodeComparison([]byte(in)); err == nil {
			t.Errorf("%q: accepted", in)
		}
	}
}

func FuzzDecodeComparison(f *testing.F) {
	good, err := results.EncodeComparison(sampleComparison(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"schema":"speedmatrix/comparison/v1","verdict":"unchanged","settings":{"fdr":0.05,"look":1},"cells":[]}`))
	f.Add([]byte(`{"schema":"speedmatrix/comparison/v1","verdict":"regression","settings":{"fdr":0.05,"look":2},"cells":[{"cell":"prefill/8K","phase":"prefill","context_label":"8K","verdict":"regression","metrics":[{"metric":"ttft_ms","base":1,"head":2,"delta":0.05,"verdict":"regression","change":{"change":1,"low":0.5,"high":1.5}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := results.DecodeComparison(data)
		if err != nil {
			return
		}
		// What the reader accepts, the writer writes and the reader reads back the same.
		out, err := results.EncodeComparison(c)
		if err != nil {
			t.Fatalf("accepted but cannot encode: %v", err)
		}
		back, err := results.DecodeComparison(out)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		a, _ := json.Marshal(c)
		b, _ := json.Marshal(back)
		if !bytes.Equal(a, b) {
			t.Fatalf("round trip changed the comparison")
		}
	})
}
