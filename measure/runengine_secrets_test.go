package measure

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/config"
)

// TestEngineSecretsOfCommand: every secret the recorded launch command hides by its place (a
// flag's value, NAME=value, an Authorization header) is also hidden from the server's log and
// from errors, which know the secrets only as values.
func TestEngineSecretsOfCommand(t *testing.T) {
	serve := config.Serve{Command: []string{"env", "HF_TOKEN=hf_literal_s3cret", "vllm", "serve", "m",
		"--api-key", "sk-literal-s3cret", "--middleware-header", "Authorization: Bearer tok_literal_s3cret"}}
	env := &Deps{Getenv: func(string) string { return "" }}
	s := newEngineSecrets(env, session{}, serve)
	log := "args: " + strings.Join(serve.Command, " ")
	got := s.text(log)
	for _, v := range []string{"hf_literal_s3cret", "sk-literal-s3cret", "tok_literal_s3cret"} {
		if strings.Contains(got, v) {
			t.Errorf("%s left in the redacted log line %q", v, got)
		}
	}
	if launch := s.launchCommand(serve.Command, nil); strings.Contains(launch, "s3cret") {
		t.Errorf("launch command %q holds a secret", launch)
	}
}
