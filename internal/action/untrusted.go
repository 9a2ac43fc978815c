package action

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/engine"
)

// The measure job of a pull request (and of /bench, a merge group, a dispatch) reads the
// speedmatrix.yaml of the commit it measures: the pull request's own, which its author wrote.
// How the engine is built and served is theirs to change; how it is confined is not. A
// configuration could otherwise turn the sandbox off (engine.sandbox: none), make the runner's
// home or temporary directory the engine's writable checkout or build cache (engine.source,
// engine.cache_dir), or show the runner's files to the engine read-only (engine.precompiled_env,
// or an absolute path in engine.build's or engine.serve's command), and the engine would then
// read a later step's token or the runner's keys, or poison what a trusted job reads.
// checkUntrustedEngine refuses those settings in an untrusted run; the workflow (on the default
// branch, which a pull request cannot change) may allow a run without the sandbox through the
// action's input allow-unsandboxed, for a runner that cannot make namespaces.

// checkUntrustedEngine returns why cfg's engine section may not be measured as an untrusted
// run on this runner (getenv: the job's environment), nil when it may.
func checkUntrustedEngine(cfg config.Config, allowUnsandboxed bool, getenv func(string) string) error {
	if mode, err := engine.ParseSandboxMode(cfg.Engine.Sandbox); err == nil && mode == engine.SandboxNone && !allowUnsandboxed {
		return fmt.Errorf("engine.sandbox: none in the measured commit's configuration: an untrusted run (a pull request's code) is built and served in the sandbox, and a pull request cannot turn it off; where the runner cannot make namespaces, the workflow on the default branch sets the action's input allow-unsandboxed: true (docs/security.md)")
	}
	guarded := guardedDirs(getenv)
	// The checkout of the measured commit (the workspace) is the pull request's own: what lies
	// in it may be named.
	ws := cleanAbs(getenv("GITHUB_WORKSPACE"))
	inCheckout := func(p string) bool { return ws != "" && ws != "/" && engine.Within(p, ws) }
	check := func(setting, p string) error {
		if p == "" {
			return nil
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("%s %q: %w", setting, p, err)
		}
		abs = filepath.Clean(abs)
		if inCheckout(abs) {
			return nil
		}
		for _, g := range guarded {
			if engine.Within(abs, g.path) || engine.Within(g.path, abs) {
				return fmt.Errorf("%s %s in the measured commit's configuration is %s %s (%s): an untrusted run's engine is shown only its checkout and its build cache; leave %s unset (the default keeps untrusted builds apart) or name a directory of its own outside the runner's home, temporary and tool directories", setting, abs, g.relation(abs), g.path, g.what, setting)
			}
		}
		return nil
	}
	for _, s := range []struct{ setting, path string }{
		{"engine.source", cfg.Engine.Source}, {"engine.cache_dir", cfg.Engine.CacheDir}, {"engine.precompiled_env", cfg.Engine.PrecompiledEnv},
	} {
		if err := check(s.setting, s.path); err != nil {
			return err
		}
	}
	var words []string
	if cfg.Engine.Serve != nil {
		words = append(words, cfg.Engine.Serve.Command...)
	}
	if cfg.Engine.Build.Mode == config.BuildCommand {
		words = append(words, strings.Fields(cfg.Engine.Build.Command)...)
	}
	for _, w := range words {
		if !filepath.IsAbs(w) {
			continue
		}
		w = filepath.Clean(w)
		if inCheckout(w) {
			continue
		}
		for _, g := range guarded {
			if engine.Within(w, g.path) || w == g.path {
				return fmt.Errorf("the engine's command in the measured commit's configuration names %s, in %s (%s): the sandbox would show it to the engine; an untrusted run's command may name its checkout's files and the system's, not the runner's", w, g.path, g.what)
			}
		}
	}
	return nil
}

// guardedDir is a directory of the runner an untrusted engine must neither write nor read.
type guardedDir struct{ path, what string }

func (g guardedDir) relation(p string) string {
	switch {
	case p == g.path:
		return "the runner's"
	case engine.Within(p, g.path):
		return "inside"
	}
	return "holds"
}

// guardedDirs returns the runner's directories from its environment: its home, RUNNER_TEMP
// (the job's command files, event payload, the action's binary and artifacts), the tool cache,
// the runner's work directory above the checkout, and the Go environment.
func guardedDirs(getenv func(string) string) []guardedDir {
	var out []guardedDir
	add := func(p, what string) {
		if p = cleanAbs(p); p != "" && p != "/" {
			out = append(out, guardedDir{p, what})
		}
	}
	add(getenv("HOME"), "the runner's home")
	add(getenv("RUNNER_TEMP"), "RUNNER_TEMP")
	add(getenv("RUNNER_TOOL_CACHE"), "the runner's tool cache")
	if t := cleanAbs(getenv("RUNNER_TEMP")); t != "" {
		add(filepath.Dir(t), "the runner's work directory")
	}
	for _, k := range []string{"GOPATH", "GOMODCACHE", "GOCACHE"} {
		add(getenv(k), k)
	}
	return out
}

// cleanAbs returns p cleaned when it is absolute, else "".
func cleanAbs(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}
