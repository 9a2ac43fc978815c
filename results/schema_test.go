package results_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"

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

// fillAll sets every exported field reachable from v to a non-zero value: pointers allocated,
// slices of one element, strings "x", numbers 1.
func fillAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillAll(v.Index(0))
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	}
}

// TestSchemaHasEveryGoField fills every field of the Go types and checks that the schema, which
// forbids unknown properties, accepts the result: a field added in Go but not documented in the
// schema fails here.
func TestSchemaHasEveryGoField(t *testing.T) {
	var f results.File
	fillAll(reflect.ValueOf(&f).Elem())
	f.Schema = results.SchemaV1
	f.Run.Source = results.SourceMeasured
	f.Run.Settings.Endpoint = "completions"
	f.Prefill[0].Status, f.Decode[0].Status = results.StatusValid, results.StatusValid
	f.Prefill[0].ContextLabel, f.Decode[0].ContextLabel = "8K", "8K"
	f.SpecDecode.Mode, f.SpecDecode.PinnedFrom = results.SpecDecodePinned, results.PinnedFromConfig
	f.SpecDecode.AcceptancePass[0].Status, f.SpecDecode.AcceptancePass[0].ContextLabel = results.StatusValid, "8K"
	data, err := json.Marshal(&f)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t).Validate(doc); err != nil {
		t.Errorf("results/schema/results-v1.schema.json lacks a field of the Go types: %v", err)
	}
}
