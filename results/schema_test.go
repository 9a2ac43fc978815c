package results_test

import (
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("schema/results-v1.schema.json")
	if err != nil {
		t.Fatalf("the JSON Schema does not compile: %v", err)
	}
	return sch
}
