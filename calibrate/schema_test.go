package calibrate

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/speedmatrix/speedmatrix/results"
)

// Comparisons with row tests and whole-row rerun advice pass the comparison file's checks and
// its JSON Schema.
func TestRowComparisonsValidate(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile("../results/schema/comparison-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	slow := &Slowdown{ContextLabel: "1019K", RateFactor: 0.94, TTFTFactor: 1.10}
	o, err := DefaultSettings().simulate(NewMatrix(5, 1), rand.New(rand.NewPCG(5, 5)), slow)
	if err != nil {
		t.Fatal(err)
	}
	if o.first.Rerun == nil || len(o.first.Rerun.Rows) == 0 || o.second == nil || len(o.second.Rows) == 0 {
		t.Fatalf("want whole-row rerun advice and row tests at the second look")
	}
	for _, c := range []*results.Comparison{o.first, o.second} {
		if err := results.ValidateComparison(c); err != nil {
			t.Error(err)
		}
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Error(err)
		}
	}
}
