package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/engine"
)

// jobEnv is the environment of a GitHub Actions job in mode full: the command files, the
// token as an input, the runner's tokens and OIDC request, and what a server needs.
func jobEnv(t *testing.T) []string {
	t.Helper()
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/runner", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"HF_TOKEN=hf_job_s3cret", "VLLM_LOGGING_LEVEL=DEBUG", "CUDA_VISIBLE_DEVICES=0", "RUNNER_TRACKING_ID=github_1",
		"GITHUB_ENV=/runner/_temp/set_env", "GITHUB_PATH=/runner/_temp/add_path", "GITHUB_OUTPUT=/runner/_temp/set_output",
		"GITHUB_STATE=/runner/_temp/save_state", "GITHUB_STEP_SUMMARY=/runner/_temp/step_summary", "GITHUB_TOKEN=ghs_job",
		"INPUT_TOKEN=ghs_input", "INPUT_PRIVATE-KEY=pem", "ACTIONS_RUNTIME_TOKEN=rt", "ACTIONS_ID_TOKEN_REQUEST_URL=https://oidc",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN=oidc", "ACTIONS_CACHE_URL=https://cache", "RUNNER_TEMP=/runner/_temp",
		"SOME_OTHER_SETTING=1", "LD_PRELOAD=/tmp/evil.so", "PYTHONPATH=/tmp/evil",
	}
}

// wantEngineEnv is what of jobEnv (plus the configured CONFIGURED=yes) an engine's process
// may see.
var wantEngineEnv = []string{"CONFIGURED", "CUDA_VISIBLE_DEVICES", "HF_TOKEN", "HOME", "LANG", "LC_ALL", "PATH", "RUNNER_TRACKING_ID", "VLLM_LOGGING_LEVEL"}

// dumpedNames reads an `env` dump and returns its names, without those bash sets itself.
func dumpedNames(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the engine did not dump its environment: %v", err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, _, _ := strings.Cut(line, "=")
		switch name {
		case "PWD", "SHLVL", "_", "OLDPWD", "DUMP":
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// TestServeEnvAllowListed: the server sees the allow-listed variables and the configured ones,
// none of the job's command files, inputs, runner or OIDC tokens, nor a configured GITHUB_ENV.
func TestServeEnvAllowListed(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "env")
	_, err := engine.StartServer(context.Background(), engine.ServeSpec{
		Command: []string{"bash", "-c", `env > "$DUMP"; exit 3`}, BaseEnv: jobEnv(t),
		Env:          map[string]string{"CONFIGURED": "yes", "DUMP": dump, "GITHUB_ENV": "/runner/_temp/set_env"},
		ReadyTimeout: 20 * time.Second, Poll: 20 * time.Millisecond, GPU: testGPU(t), LogPath: filepath.Join(t.TempDir(), "server.log"),
	})
	if err == nil {
		t.Fatal("the server exited yet started")
	}
	if diff := cmp.Diff(wantEngineEnv, dumpedNames(t, dump)); diff != "" {
		t.Errorf("the server's environment (-want +got):\n%s", diff)
	}
}

// TestBuildEnvAllowListed: a build command sees the same allow-listed environment, plus the
// variables the builder sets for it.
func TestBuildEnvAllowListed(t *testing.T) {
	fakeBuildTools(t)
	r := newRepo(t)
	dump := filepath.Join(t.TempDir(), "env")
	env := jobEnv(t)
	_, err := (&engine.Builder{Environ: func() []string { return env }}).Build(context.Background(), engine.BuildSpec{
		Source: r.dir, CacheDir: t.TempDir(), Mode: engine.ModeCommand, Command: `env > "$DUMP"`,
		Env: map[string]string{"CONFIGURED": "yes", "DUMP": dump, "INPUT_TOKEN": "ghs_input"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(wantEngineEnv), "MAX_JOBS", "SPEEDMATRIX_COMMIT", "SPEEDMATRIX_ENV_DIR", "SPEEDMATRIX_SOURCE", "TORCH_CUDA_ARCH_LIST")
	slices.Sort(want)
	if diff := cmp.Diff(want, dumpedNames(t, dump)); diff != "" {
		t.Errorf("the build's environment (-want +got):\n%s", diff)
	}
}
