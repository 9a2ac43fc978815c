package action

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/config"
)

// TestCheckUntrustedEngine: the measured commit's configuration (a pull request's own) cannot
// turn the sandbox off, make the runner's home, temporary, tool or Go directories the engine's
// writable source or build cache, show them read-only (precompiled_env), or name a file in them
// in the engine's command; its checkout's paths, the defaults and the system's programs pass.
// Before, each of these was measured as written (found by the sandbox's own review).
func TestCheckUntrustedEngine(t *testing.T) {
	env := map[string]string{
		"HOME":              "/home/runner",
		"RUNNER_TEMP":       "/srv/actions-runner/_work/_temp",
		"RUNNER_TOOL_CACHE": "/srv/actions-runner/_work/_tool",
		"GITHUB_WORKSPACE":  "/srv/actions-runner/_work/vllm/vllm",
		"GOMODCACHE":        "/home/runner/go/pkg/mod",
	}
	getenv := func(k string) string { return env[k] }
	serve := func(cmd ...string) *config.Serve { return &config.Serve{Command: cmd} }
	for _, tc := range []struct {
		name    string
		engine  config.Engine
		allow   bool
		wantErr string
	}{
		{name: "defaults", engine: config.Engine{Serve: serve("vllm", "serve", "m")}},
		{name: "the checkout's own paths", engine: config.Engine{Source: "/srv/actions-runner/_work/vllm/vllm", CacheDir: "/srv/actions-runner/_work/vllm/vllm/.cache",
			Serve: serve("sh", "/srv/actions-runner/_work/vllm/vllm/serve.sh")}},
		{name: "a directory of its own", engine: config.Engine{CacheDir: "/var/cache/engines", PrecompiledEnv: "/opt/vllm-env", Serve: serve("/usr/bin/python3", "-m", "vllm")}},
		{name: "sandbox none", engine: config.Engine{Sandbox: "none"}, wantErr: "cannot turn it off"},
		{name: "sandbox none, allowed by the workflow", engine: config.Engine{Sandbox: "none"}, allow: true},
		{name: "cache in the home", engine: config.Engine{CacheDir: "/home/runner"}, wantErr: "engine.cache_dir /home/runner"},
		{name: "cache holding the home", engine: config.Engine{CacheDir: "/home"}, wantErr: "holds /home/runner"},
		{name: "source in RUNNER_TEMP", engine: config.Engine{Source: "/srv/actions-runner/_work/_temp/x"}, wantErr: "inside /srv/actions-runner/_work/_temp"},
		{name: "source the work directory", engine: config.Engine{Source: "/srv/actions-runner/_work"}, wantErr: "engine.source"},
		{name: "cache in the Go module cache", engine: config.Engine{CacheDir: "/home/runner/go/pkg/mod/cache"}, wantErr: "engine.cache_dir"},
		{name: "precompiled env the home", engine: config.Engine{PrecompiledEnv: "/home/runner/.ssh"}, wantErr: "engine.precompiled_env"},
		{name: "serve names the runner's key", engine: config.Engine{Serve: serve("cat", "/home/runner/.ssh/id_ed25519")}, wantErr: "names /home/runner/.ssh/id_ed25519"},
		{name: "build names the event payload", engine: config.Engine{Build: config.Build{Mode: config.BuildCommand, Command: "cp /srv/actions-runner/_work/_temp/_github_workflow/event.json ."}}, wantErr: "names /srv/actions-runner/_work/_temp/_github_workflow/event.json"},
		{name: "the root", engine: config.Engine{CacheDir: "/"}, wantErr: "engine.cache_dir /"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg config.Config
			cfg.Engine = tc.engine
			err := checkUntrustedEngine(cfg, tc.allow, getenv)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("passed, want an error with %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q, want %q in it", err, tc.wantErr)
			}
		})
	}
}
