package ghtest

import (
	"encoding/json"
	"strings"
	"testing"
)

// DerivePayload returns the webhook payload with fields set: keys are dotted paths (objects
// missing on the way are made), values any JSON value. It fails t when payload is not a JSON
// object.
func DerivePayload(t testing.TB, payload []byte, set map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	for path, v := range set {
		keys := strings.Split(path, ".")
		cur := m
		for _, k := range keys[:len(keys)-1] {
			next, ok := cur[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[k] = next
			}
			cur = next
		}
		cur[keys[len(keys)-1]] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
