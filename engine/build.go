package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/redact"
)

// Mode is how an engine is built at a commit.
type Mode string

// The build modes.
const (
	ModeAuto        Mode = "auto"        // precompiled when no compiled source changed, else full
	ModePrecompiled Mode = "precompiled" // VLLM_USE_PRECOMPILED=1 editable install with uv
	ModeFull        Mode = "full"        // editable install compiling the kernels
	ModeDocker      Mode = "docker"      // the repository's Dockerfile, target vllm-openai
	ModeNone        Mode = "none"        // nothing is built; the serve command is run as it is
	ModeCommand     Mode = "command"     // BuildSpec.Command through bash -c
)

// ParseMode checks a build mode's name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, ModePrecompiled, ModeFull, ModeDocker, ModeNone, ModeCommand:
		return m, nil
	case "":
		return ModeAuto, nil
	}
	return "", fmt.Errorf("build mode %q: want auto, precompiled, full, docker, none or a command", s)
}

// BuildSpec says what to build.
type BuildSpec struct {
	Engine  string // engine name, "vllm" by default; names the environments and the image
	Source  string // the engine's git checkout
	Commit  string // the commit to build (default HEAD of Source)
	Mode    Mode   // default auto
	Command string // the build command of ModeCommand, run by bash -c in the commit's checkout
	// BaseRefs are the main-line refs tried in order for the merge-base (default origin/main,
	// main).
	BaseRefs []string
	// CacheDir holds one environment per commit (default $XDG_CACHE_HOME/speedmatrix/engines);
	// Keep is how many of them stay (default 3, least recently used pruned first).
	CacheDir string
	Keep     int
	// LogDir receives build-<commit>.log (default CacheDir/logs).
	LogDir string
	// CUDAArchList is TORCH_CUDA_ARCH_LIST of full and docker builds (default "9.0", Hopper);
	// MaxJobs their parallelism (default: the number of CPUs).
	CUDAArchList string
	MaxJobs      int
	// Python is the interpreter version of the venv (default 3.12).
	Python string
	// PrecompiledEnv, when set, is a Python environment (its directory) in which the engine's
	// wheel is installed, built at the merge-base: a precompiled build then runs offline, with
	// neither uv nor a download (precompiled_local.go): the commit's checkout provides the
	// Python sources and that environment the compiled files and the dependencies. Empty: vLLM's
	// networked recipe, VLLM_USE_PRECOMPILED=1 with the merge-base's wheel, through uv.
	PrecompiledEnv string
	// Env is added last to the build commands' environment.
	Env map[string]string
	// Secrets are the secret values a build may print: they are redacted from its output, in
	// the log file and on stderr, line by line as it is written.
	Secrets []string
	// Sandbox, when set, confines every build command but docker's (sandbox.go), with the
	// environment's directory writable (and ccache's for a full build); it needs the Builder's
	// Reaper.
	Sandbox *Sandbox
	// Trust is the trust level of the job (trust.go): environments, ccache and image tags are
	// kept per level under CacheDir/<level>, and a trusted job reuses an environment only when
	// its tree still hashes to what the build recorded (never an image: it rebuilds).
	Trust Trust
}

// Build is a built engine: where its environment is and how it got there.
type Build struct {
	Engine    string `json:"engine"`
	Commit    string `json:"commit"`
	MergeBase string `json:"merge_base,omitempty"`
	Mode      Mode   `json:"mode"`
	Reason    string `json:"reason,omitempty"` // why auto chose the mode
	Dir       string `json:"-"`                // the environment's directory
	Source    string `json:"-"`                // the commit's private checkout
	Venv      string `json:"venv,omitempty"`
	Image     string `json:"image,omitempty"`
	Command   string `json:"command,omitempty"`
	// PrecompiledEnv is the environment a precompiled build took its compiled files from
	// (BuildSpec.PrecompiledEnv); empty for the networked build.
	PrecompiledEnv string `json:"precompiled_env,omitempty"`
	Dirty          bool   `json:"dirty,omitempty"` // built from a checkout with uncommitted changes
	Trust          Trust  `json:"trust,omitempty"`
	// TreeSHA256 is, for a trusted build, the hash of its environment's tree (treeHash).
	TreeSHA256 string        `json:"tree_sha256,omitempty"`
	BuiltAt    time.Time     `json:"built_at"`
	Duration   time.Duration `json:"duration"`
	Cached     bool          `json:"-"` // reused from an earlier build
	LogPath    string        `json:"-"`
}

// markerName is the file written last into an environment: its presence means the build
// completed.
const markerName = "complete.json"

// Builder builds engines at a commit, one cached environment per commit.
type Builder struct {
	Git    Git                 // nil: GitCLI{}
	Getenv func(string) string // nil: os.Getenv
	// Reaper, when set, is the argv of a program that hands ReaperArg to Reap (speedmatrix):
	// every build command then runs under it, so that the command's whole process group dies
	// with this process (see startGroup).
	Reaper []string
	// Environ is the environment the build commands inherit, allow-listed by ProcessEnv
	// (nil: os.Environ).
	Environ func() []string
	Stderr  io.Writer        // in GitHub Actions the build output is also streamed here, in a log group
	Log     *slog.Logger     // nil: discarded
	Now     func() time.Time // nil: time.Now
	Docker  string           // docker binary (default "docker" on PATH)
	UV      string           // uv binary (default "uv" on PATH)
}

func (b *Builder) defaults() {
	if b.Git == nil {
		b.Git = GitCLI{}
	}
	if b.Getenv == nil {
		b.Getenv = os.Getenv
	}
	if b.Log == nil {
		b.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if b.Now == nil {
		b.Now = time.Now
	}
	if b.Environ == nil {
		b.Environ = os.Environ
	}
	if b.Docker == "" {
		b.Docker = "docker"
	}
	if b.UV == "" {
		b.UV = "uv"
	}
}

// DefaultCacheDir returns $XDG_CACHE_HOME/speedmatrix/engines (~/.cache/... without it).
func DefaultCacheDir(getenv func(string) string) string {
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "speedmatrix", "engines")
}

// Build builds spec's commit, or reuses its environment when that commit was built before in
// the same mode. It then prunes the cache to Keep environments, never the one returned. A
// failed build returns a *ProcessError with the exit code and the last lines of the log.
func (b *Builder) Build(ctx context.Context, spec BuildSpec) (_ *Build, err error) {
	b.defaults()
	if spec.Engine == "" {
		spec.Engine = "vllm"
	}
	if spec.Mode == "" {
		spec.Mode = ModeAuto
	}
	if spec.Mode == ModeCommand && strings.TrimSpace(spec.Command) == "" {
		return nil, errors.New("build: mode command needs the command to run")
	}
	if spec.Mode == ModeNone {
		bd := &Build{Engine: spec.Engine, Mode: ModeNone, Commit: b.commitOrEmpty(ctx, spec), BuiltAt: b.Now()}
		if spec.Source != "" {
			// Nothing is built: the server runs in the checkout itself (ServeSpec).
			if bd.Source, err = filepath.Abs(spec.Source); err != nil {
				return nil, fmt.Errorf("build: %w", err)
			}
		}
		return bd, nil
	}
	if spec.Source == "" {
		spec.Source = "."
	}
	if spec.CacheDir == "" {
		spec.CacheDir = DefaultCacheDir(b.Getenv)
	}
	if _, err := ParseTrust(string(spec.Trust)); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	if spec.Trust != TrustLocal {
		spec.CacheDir = filepath.Join(spec.CacheDir, string(spec.Trust))
	}
	if spec.Keep <= 0 {
		spec.Keep = 3
	}
	if spec.LogDir == "" {
		spec.LogDir = filepath.Join(spec.CacheDir, "logs")
	}
	if spec.CUDAArchList == "" {
		spec.CUDAArchList = "9.0"
	}
	if spec.MaxJobs <= 0 {
		spec.MaxJobs = runtime.NumCPU()
	}
	if spec.Python == "" {
		spec.Python = "3.12"
	}
	if len(spec.BaseRefs) == 0 {
		spec.BaseRefs = []string{"origin/main", "main"}
	}
	src, err := filepath.Abs(spec.Source)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	spec.Source = src

	rev := spec.Commit
	if rev == "" {
		rev = "HEAD"
	}
	commit, err := b.Git.Rev(ctx, spec.Source, rev)
	if err != nil {
		return nil, fmt.Errorf("build: which commit to build: %w; is %s a git checkout of the engine?", err, spec.Source)
	}
	bd := &Build{Engine: spec.Engine, Commit: commit, Mode: spec.Mode, Trust: spec.Trust}
	if spec.Commit == "" {
		if bd.Dirty, err = b.Git.Dirty(ctx, spec.Source); err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
	}
	if err := b.resolveMode(ctx, spec, bd); err != nil {
		return nil, err
	}
	if bd.Mode == ModeCommand {
		bd.Command = spec.Command
	}
	if bd.Mode == ModePrecompiled && spec.PrecompiledEnv != "" {
		if bd.PrecompiledEnv, err = checkPrecompiledEnv(spec.PrecompiledEnv); err != nil {
			return nil, err
		}
	}

	if err := os.MkdirAll(spec.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("build: cache directory: %w", err)
	}
	unlock, err := lockDir(ctx, spec.CacheDir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	bd.Dir = filepath.Join(spec.CacheDir, spec.Engine+"-"+commit)
	bd.Source = filepath.Join(bd.Dir, "src")
	bd.LogPath = filepath.Join(spec.LogDir, fmt.Sprintf("build-%s-%s.log", spec.Engine, short(commit)))
	switch bd.Mode {
	case ModeDocker:
		bd.Image = fmt.Sprintf("speedmatrix-%s:%s", spec.Engine, commit)
		if spec.Trust != TrustLocal {
			bd.Image = fmt.Sprintf("speedmatrix-%s-%s:%s", spec.Engine, spec.Trust, commit)
		}
	case ModePrecompiled, ModeFull:
		bd.Venv = filepath.Join(bd.Dir, "venv")
	}

	if prev, ok := b.reusable(ctx, spec, bd); ok {
		prev.Dir, prev.Source, prev.Cached, prev.LogPath = bd.Dir, bd.Source, true, bd.LogPath
		b.Log.Info("engine already built; reusing it", "commit", short(commit), "mode", prev.Mode, "dir", bd.Dir)
		touch(filepath.Join(bd.Dir, "last-used"), b.Now())
		b.prune(ctx, spec, bd.Dir)
		return prev, nil
	}
	if err := b.build(ctx, spec, bd); err != nil {
		return nil, err
	}
	b.prune(ctx, spec, bd.Dir)
	return bd, nil
}

func (b *Builder) commitOrEmpty(ctx context.Context, spec BuildSpec) string {
	if spec.Source == "" {
		return ""
	}
	rev := spec.Commit
	if rev == "" {
		rev = "HEAD"
	}
	c, err := b.Git.Rev(ctx, spec.Source, rev)
	if err != nil {
		return ""
	}
	return c
}

// resolveMode finds the merge-base and turns auto into precompiled or full.
func (b *Builder) resolveMode(ctx context.Context, spec BuildSpec, bd *Build) error {
	if bd.Mode != ModeAuto && bd.Mode != ModePrecompiled {
		return nil
	}
	var tried []string
	for _, ref := range spec.BaseRefs {
		mb, err := b.Git.MergeBase(ctx, spec.Source, bd.Commit, ref)
		if err == nil {
			bd.MergeBase = mb
			break
		}
		tried = append(tried, ref)
	}
	if bd.MergeBase == "" {
		if bd.Mode == ModePrecompiled {
			return fmt.Errorf("build: no merge-base of %s with %s: the precompiled kernels are those of a main-line commit; fetch main or build full", short(bd.Commit), strings.Join(tried, " or "))
		}
		bd.Mode, bd.Reason = ModeFull, "no merge-base with "+strings.Join(tried, " or ")
		return nil
	}
	if bd.Mode == ModePrecompiled {
		return nil
	}
	changed, err := b.Git.ChangedFiles(ctx, spec.Source, bd.MergeBase, bd.Commit)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	var bsChanged bool
	if slices.Contains(changed, "pyproject.toml") {
		before, _, err1 := b.Git.Show(ctx, spec.Source, bd.MergeBase, "pyproject.toml")
		after, _, err2 := b.Git.Show(ctx, spec.Source, bd.Commit, "pyproject.toml")
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("build: %w", err)
		}
		bsChanged = tomlTable(before, "build-system") != tomlTable(after, "build-system")
	}
	if r := NeedsFullBuild(changed, bsChanged); r != "" {
		bd.Mode, bd.Reason = ModeFull, "compiled source changed since the merge-base: "+r
	} else {
		bd.Mode, bd.Reason = ModePrecompiled, fmt.Sprintf("no compiled source among the %d files changed since the merge-base", len(changed))
	}
	b.Log.Info("build mode", "mode", bd.Mode, "reason", bd.Reason)
	return nil
}

// reusable returns the completed earlier build of bd's commit when it matches bd.
func (b *Builder) reusable(ctx context.Context, spec BuildSpec, bd *Build) (*Build, bool) {
	if bd.Dirty {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(bd.Dir, markerName))
	if err != nil {
		return nil, false
	}
	var prev Build
	if json.Unmarshal(data, &prev) != nil || prev.Dirty || prev.Mode != bd.Mode || prev.Commit != bd.Commit || prev.Command != bd.Command || prev.Trust != spec.Trust || prev.PrecompiledEnv != bd.PrecompiledEnv {
		return nil, false
	}
	if spec.Trust == TrustTrusted {
		if prev.Image != "" {
			return nil, false // a tag is the docker daemon's, which any job can retag: rebuild
		}
		sum, err := treeHash(bd.Dir)
		if err != nil || prev.TreeSHA256 == "" || sum != prev.TreeSHA256 {
			b.Log.Warn("engine environment changed since its build (or not hashed); rebuilding it", "dir", bd.Dir, "err", err)
			return nil, false
		}
	}
	if prev.Image != "" {
		if err := exec.CommandContext(ctx, b.Docker, "image", "inspect", prev.Image).Run(); err != nil {
			return nil, false
		}
	}
	return &prev, true
}

// step is one command of a build.
type step struct {
	argv  []string
	dir   string
	env   []string
	stdin string // the command's standard input (a script for "python -"); empty: none
}

// build runs the build of bd into a fresh environment directory and writes the marker last.
func (b *Builder) build(ctx context.Context, spec BuildSpec, bd *Build) error {
	if err := os.RemoveAll(bd.Dir); err != nil {
		return fmt.Errorf("build: clear %s: %w", bd.Dir, err)
	}
	if err := os.MkdirAll(bd.Dir, 0o755); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if err := os.MkdirAll(spec.LogDir, 0o755); err != nil {
		return fmt.Errorf("build: log directory: %w", err)
	}
	logf, err := os.Create(bd.LogPath)
	if err != nil {
		return fmt.Errorf("build: log: %w", err)
	}
	defer logf.Close()
	var raw io.Writer = logf
	actions := b.Getenv("GITHUB_ACTIONS") == "true" && b.Stderr != nil
	if actions {
		fmt.Fprintf(b.Stderr, "::group::build %s %s\n", spec.Engine, short(bd.Commit))
		defer fmt.Fprintln(b.Stderr, "::endgroup::")
		raw = io.MultiWriter(logf, b.Stderr)
	}
	lw := redact.NewLineWriter(raw, spec.Secrets...)
	defer lw.Flush()
	var out io.Writer = lw
	start := b.Now()
	b.Log.Info("building engine", "commit", short(bd.Commit), "mode", bd.Mode, "log", bd.LogPath)
	if err := b.Git.Checkout(ctx, spec.Source, bd.Source, bd.Commit); err != nil {
		return fmt.Errorf("build: check out %s: %w", short(bd.Commit), err)
	}
	if bd.Dirty {
		fmt.Fprintf(out, "speedmatrix: %s has uncommitted changes; they are not built (the build is of commit %s) and this environment is never reused\n", spec.Source, bd.Commit)
	}
	for _, st := range b.steps(spec, bd) {
		fmt.Fprintf(out, "$ %s\n", strings.Join(st.argv, " "))
		if err := runStep(ctx, st, out, b.Reaper, b.stepSandbox(spec, bd)); err != nil {
			var se *SandboxError
			if errors.As(err, &se) {
				return err
			}
			var pe *ProcessError
			if errors.As(err, &pe) {
				pe.Log = bd.LogPath
				lw.Flush()
				logf.Sync()
				pe.Tail = tailFile(bd.LogPath, TailLines)
				pe.Reason = fmt.Sprintf("of %s %s (%s) failed at %q", spec.Engine, short(bd.Commit), bd.Mode, strings.Join(st.argv, " "))
			}
			return err
		}
	}
	bd.BuiltAt = start
	bd.Duration = b.Now().Sub(start)
	if spec.Trust == TrustTrusted {
		if bd.TreeSHA256, err = treeHash(bd.Dir); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	data, err := json.MarshalIndent(bd, "", "  ")
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	touch(filepath.Join(bd.Dir, "last-used"), b.Now())
	if err := os.WriteFile(filepath.Join(bd.Dir, markerName), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("build: completion marker: %w", err)
	}
	b.Log.Info("engine built", "commit", short(bd.Commit), "mode", bd.Mode, "took", bd.Duration.Round(time.Second))
	return nil
}

// steps returns the commands of bd's build, as a vLLM developer would run them.
func (b *Builder) steps(spec BuildSpec, bd *Build) []step {
	env := b.Environ()
	extra := func(kv ...string) []string {
		for _, k := range sortedKeys(spec.Env) {
			kv = append(kv, k+"="+spec.Env[k])
		}
		e, dropped := ProcessEnv(env, kv) // env.go: allow-listed
		if len(dropped) > 0 {
			b.Log.Warn("build env: variables a build may not be given were dropped", "names", strings.Join(dropped, ","))
		}
		return e
	}
	jobs := strconv.Itoa(spec.MaxJobs)
	switch bd.Mode {
	case ModeCommand:
		return []step{{argv: []string{"bash", "-c", spec.Command}, dir: bd.Source, env: extra(
			"SPEEDMATRIX_COMMIT="+bd.Commit, "SPEEDMATRIX_ENV_DIR="+bd.Dir, "SPEEDMATRIX_SOURCE="+bd.Source,
			"MAX_JOBS="+jobs, "TORCH_CUDA_ARCH_LIST="+spec.CUDAArchList)}}
	case ModeDocker:
		return []step{{argv: []string{b.Docker, "build", "--file", "docker/Dockerfile", "--target", "vllm-openai",
			"--tag", bd.Image, "--build-arg", "max_jobs=" + jobs, "--build-arg", "torch_cuda_arch_list=" + spec.CUDAArchList, "."},
			dir: bd.Source, env: extra("DOCKER_BUILDKIT=1")}}
	}
	if bd.Mode == ModePrecompiled && bd.PrecompiledEnv != "" {
		return localPrecompiledSteps(bd, extra()) // precompiled_local.go
	}
	python := filepath.Join(bd.Venv, "bin", "python")
	venv := step{argv: []string{b.UV, "venv", "--python", spec.Python, "--seed", bd.Venv}, dir: bd.Source, env: extra()}
	install := []string{b.UV, "pip", "install", "--python", python, "--editable", ".", "--torch-backend=auto"}
	if bd.Mode == ModePrecompiled {
		kv := []string{"VIRTUAL_ENV=" + bd.Venv, "VLLM_USE_PRECOMPILED=1"}
		if bd.MergeBase != "" {
			kv = append(kv, "VLLM_PRECOMPILED_WHEEL_COMMIT="+bd.MergeBase)
		}
		return []step{venv, {argv: install, dir: bd.Source, env: extra(kv...)}}
	}
	ccache := filepath.Join(spec.CacheDir, "ccache")
	return []step{venv, {argv: install, dir: bd.Source, env: extra(
		"VIRTUAL_ENV="+bd.Venv, "MAX_JOBS="+jobs, "TORCH_CUDA_ARCH_LIST="+spec.CUDAArchList,
		"CCACHE_DIR="+ccache, "CCACHE_NOHASHDIR=true",
		"CMAKE_C_COMPILER_LAUNCHER=ccache", "CMAKE_CXX_COMPILER_LAUNCHER=ccache", "CMAKE_CUDA_COMPILER_LAUNCHER=ccache")}}
}

// stepSandbox returns the sandbox of bd's build commands: spec's with the environment's
// directory writable (the checkout and the venv are in it), ccache's for a full build, the
// precompiled environment read-only; nil without a sandbox or for docker, whose container
// isolates and whose client needs the daemon's socket.
func (b *Builder) stepSandbox(spec BuildSpec, bd *Build) *Sandbox {
	if spec.Sandbox == nil || bd.Mode == ModeDocker {
		return nil
	}
	sb := spec.Sandbox.Clone()
	sb.Writable = append(sb.Writable, bd.Dir)
	if bd.Mode == ModeFull {
		ccache := filepath.Join(spec.CacheDir, "ccache")
		if err := os.MkdirAll(ccache, 0o755); err == nil {
			sb.Writable = append(sb.Writable, ccache)
		}
	}
	if bd.PrecompiledEnv != "" {
		sb.ReadOnly = append(sb.ReadOnly, bd.PrecompiledEnv)
	}
	return sb
}

// runStep runs one build command in its own process group with its output to out; a
// cancelled ctx stops the whole group (compilers included).
func runStep(ctx context.Context, st step, out io.Writer, reaper []string, sb *Sandbox) error {
	cmd := exec.Command(st.argv[0], st.argv[1:]...)
	cmd.Dir, cmd.Env = st.dir, st.env
	cmd.Stdout, cmd.Stderr = out, out
	if st.stdin != "" {
		cmd.Stdin = strings.NewReader(st.stdin)
	}
	g, err := startGroup(cmd, reaper, sb)
	if err != nil {
		var se *SandboxError
		if errors.As(err, &se) {
			return err
		}
		return &ProcessError{What: "build", ExitCode: -1, Reason: fmt.Sprintf("could not start %s: %v", st.argv[0], err)}
	}
	select {
	case <-g.done:
	case <-ctx.Done():
		g.stop(10 * time.Second)
		return fmt.Errorf("build: %w", ctx.Err())
	}
	// The leader is done; make sure nothing it started outlives it.
	if !groupGone(g.pgid) {
		g.stop(5 * time.Second)
	}
	if g.err != nil {
		code, sig := exitStatus(cmd.ProcessState)
		return &ProcessError{What: "build", ExitCode: code, Signal: sig}
	}
	return nil
}

// prune removes the least recently used environments beyond spec.Keep, and incomplete ones,
// never inUse.
func (b *Builder) prune(ctx context.Context, spec BuildSpec, inUse string) {
	ents, err := os.ReadDir(spec.CacheDir)
	if err != nil {
		return
	}
	type env struct {
		dir  string
		used time.Time
		prev Build
	}
	var envs []env
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), spec.Engine+"-") {
			continue
		}
		dir := filepath.Join(spec.CacheDir, e.Name())
		if dir == inUse {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, markerName))
		if err != nil {
			b.Log.Info("removing an incomplete engine build", "dir", dir)
			os.RemoveAll(dir)
			continue
		}
		var prev Build
		_ = json.Unmarshal(data, &prev)
		var used time.Time
		if st, err := os.Stat(filepath.Join(dir, "last-used")); err == nil {
			used = st.ModTime()
		}
		envs = append(envs, env{dir, used, prev})
	}
	slices.SortFunc(envs, func(a, b env) int { return b.used.Compare(a.used) })
	for i, e := range envs {
		if i < spec.Keep-1 {
			continue
		}
		b.Log.Info("pruning an engine build", "dir", e.dir, "last_used", e.used.Format(time.RFC3339))
		if e.prev.Image != "" {
			_ = exec.CommandContext(ctx, b.Docker, "rmi", "--force", e.prev.Image).Run()
		}
		os.RemoveAll(e.dir)
	}
}

// ServeSpec adapts spec to run the built engine: the venv's bin first on PATH (and
// VIRTUAL_ENV) for uv builds; for docker, the command becomes docker run of the image, which
// runs "vllm serve" itself, and the container is removed after the stop.
func (bd *Build) ServeSpec(spec ServeSpec) ServeSpec {
	venv := bd.Venv
	if venv == "" && bd.Mode == ModeCommand {
		if _, err := os.Stat(filepath.Join(bd.Dir, "venv", "bin")); err == nil {
			venv = filepath.Join(bd.Dir, "venv")
		}
	}
	base := spec.BaseEnv
	if base == nil {
		base = os.Environ()
	}
	if spec.Dir == "" {
		spec.Dir = bd.Source // each commit is served from its own tree
	}
	switch {
	case bd.Image != "":
		spec.Sandbox = nil // the container isolates; docker run needs the daemon's socket
	case spec.Sandbox != nil:
		sb := spec.Sandbox.Clone()
		if bd.Dir != "" {
			sb.Writable = append(sb.Writable, bd.Dir)
		} else if bd.Source != "" {
			sb.Writable = append(sb.Writable, bd.Source)
		}
		if bd.PrecompiledEnv != "" {
			sb.ReadOnly = append(sb.ReadOnly, bd.PrecompiledEnv)
		}
		spec.Sandbox = sb
	}
	switch {
	case venv != "":
		env := map[string]string{}
		for k, v := range spec.Env {
			env[k] = v
		}
		path := envMap(base)["PATH"]
		env["PATH"] = filepath.Join(venv, "bin") + string(os.PathListSeparator) + path
		env["VIRTUAL_ENV"] = venv
		spec.Env = env
		if len(spec.Command) > 0 && !strings.Contains(spec.Command[0], "/") {
			// exec looks the program up on the server's PATH, not ours.
			if p := filepath.Join(venv, "bin", spec.Command[0]); isExecutable(p) {
				spec.Command = append([]string{p}, spec.Command[1:]...)
			}
		}
	case bd.Image != "":
		if spec.Model == "" {
			spec.Model = ModelFromCommand(spec.Command)
		}
		name := fmt.Sprintf("speedmatrix-%s-%s-${PORT}", bd.Engine, short(bd.Commit))
		argv := []string{"docker", "run", "--rm", "--name", name, "--gpus", "all", "--ipc=host", "-p", "127.0.0.1:${PORT}:${PORT}"}
		if home, err := os.UserHomeDir(); err == nil {
			argv = append(argv, "-v", filepath.Join(home, ".cache", "huggingface")+":/root/.cache/huggingface")
		}
		for _, k := range sortedKeys(spec.Env) {
			argv = append(argv, "-e", k) // the value comes from docker's environment: no secret in argv
		}
		args := spec.Command
		if len(args) >= 2 && filepath.Base(args[0]) == "vllm" && args[1] == "serve" {
			args = args[2:] // the image's entrypoint is vllm serve
			argv = append(argv, bd.Image)
		} else if len(args) > 0 {
			argv = append(argv, "--entrypoint", args[0], bd.Image)
			args = args[1:]
		}
		spec.Command = append(argv, args...)
		spec.AfterStop = []string{"docker", "rm", "--force", name}
	}
	return spec
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// lockDir takes an exclusive lock on dir (one build at a time per cache), waiting for it.
func lockDir(ctx context.Context, dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("build: lock the cache: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("build: lock the cache: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("build: waiting for another build in %s: %w", dir, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func touch(path string, t time.Time) {
	if err := os.WriteFile(path, []byte(t.Format(time.RFC3339Nano)+"\n"), 0o644); err == nil {
		_ = os.Chtimes(path, t, t)
	}
}

// short returns the first 12 characters of a commit hash.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
