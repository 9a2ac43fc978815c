package measure

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/speedmatrix/speedmatrix/engine"
)

// sandboxNoneNote is what a run with engine.sandbox: none records (and the check shows).
const sandboxNoneNote = "engine.sandbox: none: the engine's build and server ran unconfined, as the runner's user beside its other processes"

// prepareEngineRun checks the runner for o's trust level and returns the sandbox of o's
// engine.build and engine.serve: an untrusted run leaves the untrusted-code marker in the
// runner's tool directory, a trusted one is refused on a runner that has one unless the
// runner says it is ephemeral (engine.CheckTrustedRunner). The sandbox is nil with
// engine.sandbox: none; where the machine cannot make one, the run is refused with the reason
// and the setting that fixes it (engine.SandboxError).
func prepareEngineRun(ctx context.Context, env *Deps, o session) (*engine.Sandbox, error) {
	toolDir := env.Getenv("RUNNER_TOOL_CACHE")
	switch engine.Trust(o.Engine.Trust) {
	case engine.TrustTrusted:
		if err := engine.CheckTrustedRunner(toolDir, env.Getenv(engine.EphemeralVar) == "true"); err != nil {
			return nil, err
		}
	case engine.TrustUntrusted:
		if err := engine.MarkUntrusted(toolDir); err != nil {
			return nil, err
		}
	}
	mode, err := engine.ParseSandboxMode(o.Engine.Sandbox)
	if err != nil {
		return nil, settingsf("%v", err)
	}
	if mode == engine.SandboxNone {
		env.Log.Warn(sandboxNoneNote)
		return nil, nil
	}
	reaper := EngineReaper()
	if err := engine.SandboxCheck(ctx, reaper); err != nil {
		return nil, err
	}
	return engineSandbox(env, o), nil
}

// engineSandbox returns what the engine's processes see besides their build's directories
// (which engine.Build adds): a private HOME at the engine's HOME; the model caches, uv's
// Python installations and speedmatrix itself (for speedmatrix sim as the engine) read-only;
// the runner's directories, the Go environment, the engine cache and the results' directory
// hidden wherever they lie inside a shown directory.
func engineSandbox(env *Deps, o session) *engine.Sandbox {
	get := func(k string) []string { // the program's view and the engine's inherited one
		var vs []string
		for _, v := range []string{env.Getenv(k), os.Getenv(k)} {
			if v != "" && filepath.IsAbs(v) {
				vs = append(vs, filepath.Clean(v))
			}
		}
		return vs
	}
	home := os.Getenv("HOME")
	sb := &engine.Sandbox{Home: home}
	if exe, err := os.Executable(); err == nil {
		sb.ReadOnly = append(sb.ReadOnly, exe)
	}
	// The speedmatrix the engine's PATH names (a launch script's `speedmatrix sim`), at its
	// place, even under RUNNER_TEMP or /tmp: the program alone, not its directory.
	for _, path := range []string{env.Getenv("PATH"), os.Getenv("PATH")} {
		if exe := lookPathIn("speedmatrix", path); exe != "" {
			sb.ReadOnly = append(sb.ReadOnly, exe)
		}
	}
	hf := append(get("HF_HUB_CACHE"), get("HF_HOME")...)
	if len(get("HF_HOME")) == 0 {
		for _, c := range get("XDG_CACHE_HOME") {
			hf = append(hf, filepath.Join(c, "huggingface"))
		}
		if home != "" {
			hf = append(hf, filepath.Join(home, ".cache", "huggingface"))
		}
	}
	sb.ReadOnly = append(sb.ReadOnly, hf...)
	sb.ReadOnly = append(sb.ReadOnly, get("UV_PYTHON_INSTALL_DIR")...)
	if home != "" {
		sb.ReadOnly = append(sb.ReadOnly, filepath.Join(home, ".local", "share", "uv", "python"))
	}
	for _, k := range []string{"RUNNER_TEMP", "RUNNER_TOOL_CACHE", "RUNNER_WORKSPACE", "GITHUB_WORKSPACE", "GOPATH", "GOMODCACHE", "GOCACHE", "GOENV", "GOROOT"} {
		sb.Hidden = append(sb.Hidden, get(k)...)
	}
	for _, t := range get("RUNNER_TEMP") {
		// RUNNER_TEMP is <runner>/_work/_temp: the work directory and the runner's own
		// (its .credentials, .runner, .env) go with it.
		work := filepath.Dir(t)
		sb.Hidden = append(sb.Hidden, work)
		if root := filepath.Dir(work); strings.Count(root, "/") >= 2 {
			sb.Hidden = append(sb.Hidden, root)
		}
	}
	cache := o.Engine.CacheDir
	if cache == "" {
		cache = engine.DefaultCacheDir(os.Getenv)
	}
	for _, p := range []string{cache, o.Output, o.Paired.BaseSource} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if p == o.Output {
				abs = filepath.Dir(abs)
			}
			sb.Hidden = append(sb.Hidden, abs)
		}
	}
	return sb
}

// sandboxNotes returns what a served run records of its sandbox.
func sandboxNotes(o session) []string {
	if o.Engine.Sandbox == string(engine.SandboxNone) {
		return []string{sandboxNoneNote}
	}
	return nil
}

// checkOutputOutsideEngine refuses results (and a paired run's base results) written inside
// the checkout source, which the engine may write with engine.build: none (it serves from the
// checkout): only speedmatrix writes results. Without source, the current directory is the
// checkout when the serve command runs a file of it.
func checkOutputOutsideEngine(o session, source string) error {
	if o.Engine.BuildMode() != "none" {
		return nil
	}
	if source == "" {
		// Without engine.source the server runs in the current directory; a command that runs
		// a file of it (./serve.sh) needs it, and the sandbox hides the results' folder.
		if o.Engine.Serve == nil || !engine.ServeUsesTree(o.Engine.Serve.Command, ".") {
			return nil
		}
		source = "."
	}
	src, err := filepath.Abs(source)
	if err != nil {
		return nil
	}
	outs := []string{o.Output}
	if o.Paired.Enabled {
		outs = append(outs, BaseOutputPath(o.Settings))
	}
	for _, p := range outs {
		out, err := filepath.Abs(p)
		if p == "" || err != nil {
			continue
		}
		if engine.Within(out, src) {
			return settingsf("results file %s is inside the engine's checkout %s, which the engine may write (build: none serves from the checkout): write the results elsewhere", p, source)
		}
	}
	return nil
}

// lookPathIn returns the first executable file named name in the directories of path (a
// PATH value), or "".
func lookPathIn(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
