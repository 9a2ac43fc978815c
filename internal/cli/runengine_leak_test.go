package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRunEngineSecretsNeverInArtifact: a build and a server that print the API key and HF_TOKEN,
// in GitHub Actions, cancelled while the server loads: the secrets are masked first
// (::add-mask:: before any other line), never appear in the artifact directory at any moment
// nor in the job log, and the raw server log (which holds them) is outside the artifact,
// under RUNNER_TEMP, mode 0600.
func TestRunEngineSecretsNeverInArtifact(t *testing.T) {
	const hfToken = "hf_leaktest_s3cret_token"
	src, _, _ := gitInit(t)
	artifact, runnerTemp, cache := t.TempDir(), t.TempDir(), t.TempDir()
	cfg := filepath.Join(t.TempDir(), "speedmatrix.yaml")
	yaml := engineMatrix + fmt.Sprintf(`api_key_env: KEY
engine:
  name: leaky
  source: %q
  cache_dir: %q
  build: {command: 'echo "building with $HF_TOKEN"; echo "key $VLLM_API_KEY"'}
  serve:
    command: [bash, -c, 'echo "non-default args: {''api_key'': ''$0'', ''hf'': ''$HF_TOKEN''}"; echo loading; exec sleep 300', '${KEY}']
    port: 0
    ready_timeout: 60s
    stop_grace: 2s
`, src, cache)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KEY": engineKey, "HF_TOKEN": hfToken, "VLLM_API_KEY": engineKey, "GITHUB_ACTIONS": "true", "RUNNER_TEMP": runnerTemp}
	for _, k := range []string{"HF_TOKEN", "VLLM_API_KEY"} {
		t.Setenv(k, env[k]) // what the build and the server inherit
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var leaked []string
	var mu sync.Mutex
	done := make(chan struct{})
	go func() { // watch the artifact directory the whole time; cancel once the server logged
		defer close(done)
		for ctx.Err() == nil {
			_ = filepath.WalkDir(artifact, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				data, _ := os.ReadFile(p)
				for _, s := range []string{engineKey, hfToken} {
					if strings.Contains(string(data), s) {
						mu.Lock()
						leaked = append(leaked, p)
						mu.Unlock()
					}
				}
				if strings.HasSuffix(p, ".server.log") && strings.Contains(string(data), "loading") {
					cancel()
				}
				return nil
			})
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var out, errOut strings.Builder
	err := Run(ctx, []string{"run", "--config", cfg, "-o", filepath.Join(artifact, "results.json")},
		&lockedWriter{w: &out}, &lockedWriter{w: &errOut}, func(k string) string { return env[k] })
	<-done
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("run = %v, want it cancelled while the server loads; stderr:\n%s", err, errOut.String())
	}
	if len(leaked) > 0 {
		t.Errorf("a secret was in the artifact directory: %v", leaked)
	}
	stderr := errOut.String()
	lines := strings.Split(stderr, "\n")
	masks := map[string]bool{}
	for _, l := range lines {
		v, ok := strings.CutPrefix(l, "::add-mask::")
		if !ok {
			break
		}
		masks[v] = true
	}
	if !masks[engineKey] || !masks[hfToken] {
		t.Errorf("the secrets are not masked before anything else is printed:\n%s", stderr)
	}
	rest := strings.Join(lines[len(masks):], "\n")
	if strings.Contains(rest, engineKey) || strings.Contains(rest, hfToken) || !strings.Contains(rest, "building with <redacted>") || !strings.Contains(rest, "key <redacted>") {
		t.Errorf("the job log holds a secret or lacks the redacted build output:\n%s", rest)
	}
	raws, _ := filepath.Glob(filepath.Join(runnerTemp, "speedmatrix-server-raw-*.log"))
	if len(raws) != 1 {
		t.Fatalf("raw server logs under RUNNER_TEMP: %v, want one", raws)
	}
	st, _ := os.Stat(raws[0])
	data, _ := os.ReadFile(raws[0])
	if st.Mode().Perm() != 0o600 || !strings.Contains(string(data), engineKey) || !strings.Contains(string(data), hfToken) {
		t.Errorf("raw log %s: mode %v, want 0600 and the unredacted output:\n%s", raws[0], st.Mode().Perm(), data)
	}
}
