package redact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestArgSecrets: ArgSecrets lists exactly what Args replaces by place, so that a caller who
// redacts those values elsewhere (a server's log) hides the same secrets as the recorded command.
func TestArgSecrets(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"flag then value", []string{"vllm", "serve", "--api-key", "sk-abc123", "--port", "8000"}, []string{"sk-abc123"}},
		{"flag=value", []string{"vllm", "--hf-token=hf_abcdef", "--max-num-seqs=8"}, []string{"hf_abcdef"}},
		{"NAME=value", []string{"env", "HF_TOKEN=hf_literal_s3cret", "vllm", "serve"}, []string{"hf_literal_s3cret"}},
		{"header", []string{"curl", "-H", "Authorization: Bearer tok_literal_s3cret", "http://x"}, []string{"tok_literal_s3cret"}},
		{"reference kept", []string{"vllm", "--api-key", "${KEY}"}, nil},
		{"once", []string{"a", "--api-key", "sk-abc123", "--token=sk-abc123"}, []string{"sk-abc123"}},
		{"none", []string{"vllm", "serve", "m"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ArgSecrets(tc.args)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ArgSecrets(%q) (-want +got):\n%s", tc.args, diff)
			}
			red := strings.Join(Args(tc.args), " ")
			for _, v := range got {
				if strings.Contains(red, v) {
					t.Errorf("Args left %q in %q", v, red)
				}
			}
		})
	}
}
