package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/engine"
)

// TestBuildTrustLevels: a trusted job never reuses what an untrusted job built of the same
// commit (each level has its own environments and ccache), reuses its own build while the
// tree is unchanged, and rebuilds it once a file was dropped into it.
func TestBuildTrustLevels(t *testing.T) {
	fakeBuildTools(t)
	r := newRepo(t)
	cache := t.TempDir()
	counter := filepath.Join(t.TempDir(), "builds")
	build := func(trust engine.Trust) *engine.Build {
		t.Helper()
		bd, err := (&engine.Builder{}).Build(context.Background(), engine.BuildSpec{
			Source: r.dir, CacheDir: cache, Mode: engine.ModeCommand, Trust: trust,
			Command: `mkdir -p "$SPEEDMATRIX_ENV_DIR/venv/lib" && echo ok > "$SPEEDMATRIX_ENV_DIR/venv/lib/engine.py" && echo "$SPEEDMATRIX_ENV_DIR" >> "$COUNTER"`,
			Env:     map[string]string{"COUNTER": counter},
		})
		if err != nil {
			t.Fatal(err)
		}
		return bd
	}
	untrusted := build(engine.TrustUntrusted)
	trusted := build(engine.TrustTrusted)
	if trusted.Cached || trusted.Dir == untrusted.Dir {
		t.Fatalf("the trusted build reused the untrusted one's environment %s (cached %v)", untrusted.Dir, trusted.Cached)
	}
	if !strings.HasPrefix(untrusted.Dir, filepath.Join(cache, "untrusted")+"/") || !strings.HasPrefix(trusted.Dir, filepath.Join(cache, "trusted")+"/") {
		t.Errorf("environments %s and %s: want them under CACHE/untrusted and CACHE/trusted", untrusted.Dir, trusted.Dir)
	}
	if again := build(engine.TrustTrusted); !again.Cached {
		t.Error("the unchanged trusted build was not reused")
	}
	if err := os.WriteFile(filepath.Join(trusted.Dir, "venv", "lib", "evil.pth"), []byte("import os\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again := build(engine.TrustTrusted); again.Cached {
		t.Error("a trusted build changed after it was built was reused")
	}
	data, _ := os.ReadFile(counter)
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Errorf("%d builds ran, want 3 (untrusted, trusted, trusted again after the change):\n%s", n, data)
	}
}

// TestTrustedRunnerRefusedAfterUntrusted: an untrusted measurement leaves its marker in the
// runner's tool directory; a trusted one on that runner is then refused, unless the runner
// says it is ephemeral; outside a runner (no tool directory) nothing is marked or refused.
func TestTrustedRunnerRefusedAfterUntrusted(t *testing.T) {
	tools := t.TempDir()
	if err := engine.CheckTrustedRunner(tools, false); err != nil {
		t.Fatalf("a runner that never measured untrusted code: %v", err)
	}
	if err := engine.MarkUntrusted(tools); err != nil {
		t.Fatal(err)
	}
	err := engine.CheckTrustedRunner(tools, false)
	if err == nil || !strings.Contains(err.Error(), engine.EphemeralVar) || !strings.Contains(err.Error(), "runner label") {
		t.Errorf("a trusted run after an untrusted one = %v, want a refusal naming the fixes", err)
	}
	if err := engine.CheckTrustedRunner(tools, true); err != nil {
		t.Errorf("on an ephemeral runner: %v", err)
	}
	if err := engine.MarkUntrusted(""); err != nil {
		t.Error(err)
	}
	if err := engine.CheckTrustedRunner("", false); err != nil {
		t.Error(err)
	}
}
