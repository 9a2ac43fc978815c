package envexpand

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"PORT": "8123", "VLLM_API_KEY": "sk-1"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct{ in, want, err string }{
		{"--port", "--port", ""},
		{"${PORT}", "8123", ""},
		{"127.0.0.1:${PORT}", "127.0.0.1:8123", ""},
		{"${VLLM_API_KEY}/${PORT}", "sk-1/8123", ""},
		{"$$5", "$5", ""},
		{"$PORT", "$PORT", ""},
		{"cost$", "cost$", ""},
		{"${NOPE}", "", "${NOPE}: the variable is not set"},
		{"${PORT", "", "without a closing }"},
		{"${}", "", "not a variable name"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, lookup)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Expand(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
