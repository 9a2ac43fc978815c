package engine

import "testing"

// TestRandomWeights: a launch command serves random weights exactly when it passes vLLM's
// --load-format dummy, as two arguments, as one, or inside a bash -c line.
func TestRandomWeights(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want bool
	}{
		{"two arguments", []string{"vllm", "serve", "m", "--load-format", "dummy"}, true},
		{"one argument", []string{"python", "-m", "vllm.entrypoints.openai.api_server", "--load-format=dummy"}, true},
		{"inside bash -c", []string{"bash", "-c", "vllm serve m --load-format dummy --port $PORT"}, true},
		{"quoted inside bash -c", []string{"bash", "-c", "vllm serve m --load-format 'dummy'"}, true},
		{"trained weights", []string{"vllm", "serve", "m", "--load-format", "safetensors"}, false},
		{"no load format", []string{"vllm", "serve", "m"}, false},
		{"dummy as the model's name", []string{"vllm", "serve", "dummy"}, false},
		{"the flag without a value", []string{"vllm", "serve", "m", "--load-format"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RandomWeights(tt.argv); got != tt.want {
				t.Errorf("RandomWeights(%q) = %v, want %v", tt.argv, got, tt.want)
			}
		})
	}
}
