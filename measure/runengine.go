package measure

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/internal/redact"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// runEngine is `speedmatrix run` with engine.serve and no URL, in one command: it builds the
// engine (engine.build; none builds nothing), locks the GPU clocks when gpu.lock_clocks asks,
// starts the server (engine.serve.command, ${NAME} from the environment and PORT), measures it
// through measureURL like any server, and stops it (SIGTERM to its process group, SIGKILL after
// stop_grace), then restores the clocks. Ctrl-C or a crash of the server still stops it and
// keeps the results measured so far, marked partial. The server's output is kept next to the
// results (OUTPUT.server.log). The results record the engine's provenance (name, /version,
// commit, merge-base, build mode), the launch command as run and the machine's fingerprint;
// every secret the command was given (see engineSecrets) is redacted from them, from the log
// file and from the error returned. How long each phase took is logged at the end.
func runEngine(ctx context.Context, env *Deps, o session) (err error) {
	serve := *o.Engine.Serve
	lookup := envLookup(env) // runengine_serve.go
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = keyVarOfCommand(serve.Command)
	}
	sec := newEngineSecrets(env, o, serve)
	defer func() { err = sec.redactError(err) }()
	sec.mask(env)

	// Fail now, not after an hour of building, on a variable that is not set.
	if _, err := serve.Expanded(func(name string) (string, bool) {
		if name == "PORT" {
			return "0", true
		}
		return lookup(name)
	}); err != nil {
		return settingsf("%v", err)
	}
	if o.APIKeyEnv != "" && env.Getenv(o.APIKeyEnv) == "" {
		return settingsf("api_key_env %s: the variable is not set or empty; export the server's API key in it", o.APIKeyEnv)
	}
	if o.Output == "" {
		return settingsf("--output: give the results file to write")
	}

	var ph enginePhases
	defer ph.log(env.Log)

	spec, err := EngineBuildSpec(o.Settings)
	if err != nil {
		return err
	}
	spec.Secrets = sec.values
	if err := checkPinnedSource(ctx, o, spec); err != nil {
		return err
	}
	if err := checkOutputOutsideEngine(o, o.Engine.Source); err != nil {
		return err
	}
	sandbox, err := prepareEngineRun(ctx, env, o) // runengine_sandbox.go
	if err != nil {
		return err
	}
	spec.Sandbox = sandbox
	start := time.Now()
	bd, err := (&engine.Builder{Getenv: env.Getenv, Stderr: env.Stderr, Log: env.Log, Reaper: EngineReaper()}).Build(ctx, spec)
	ph.build = time.Since(start)
	if err != nil {
		return &engineError{phase: "engine.build", err: err}
	}

	var lock *engine.ClockLock
	if o.GPU.LockClocks {
		var restore func(*error)
		if lock, restore, err = lockClocks(ctx, env); err != nil { // runengine_clocks.go
			return err
		}
		defer restore(&err)
	}
	hw := engine.Hardware(ctx)

	logPath := o.Output + ".server.log"
	if err := os.Remove(logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("server log %s: %w", logPath, err)
	}
	start = time.Now()
	srv, err := startServer(ctx, env, o, bd, logPath, sec.values, sandbox) // runengine_serve.go
	ph.load = time.Since(start)
	if err != nil {
		sec.redactFile(env, logPath)
		return &engineError{phase: "engine.serve", err: err}
	}
	defer func() {
		start := time.Now()
		serr := srv.Stop(context.WithoutCancel(ctx))
		ph.stop = time.Since(start)
		sec.redactFile(env, logPath)
		env.Log.Info("server stopped", "log", logPath, "killed_after_grace", srv.Killed())
		if serr != nil {
			err = errors.Join(err, &engineError{phase: "engine.serve: stopping the server", err: serr})
		}
	}()

	o, rec := servedRun(ctx, env, o, srv, bd, sec, logPath, hw, lock)
	env.Log.Info("server ready; measuring", "url", srv.URL(), "model", srv.Model(), "launch", rec.launch, "log", logPath)

	o.build, o.load = ph.build, ph.load // the GPU time before measuring (run_adaptive.go)
	start = time.Now()
	sim := simulatorAtURL(ctx, env, &o)
	err = measureURL(ctx, env, o, srv.URL(), chainFinish(sim, rec.apply, o.finish))
	ph.measure = time.Since(start)
	if errors.Is(err, bench.ErrServerDead) {
		// A server that stopped answering is usually on its way out (a crash closes its
		// socket before the process ends): wait for its exit, up to 10 s and never beyond its
		// stop grace, so that the error says why (its exit code and last log lines), not only
		// that it stopped answering. A server that hangs alive is stopped below.
		wait := 10 * time.Second
		if o.Engine.Serve != nil && o.Engine.Serve.StopGrace > 0 {
			wait = min(wait, time.Duration(o.Engine.Serve.StopGrace))
		}
		select {
		case <-srv.Exited():
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	if serr := srv.Err(); serr != nil {
		// The server exited while it was measured: say why, with its last log lines.
		err = errors.Join(err, serr)
	}
	return err
}

// checkPinnedSource refuses a run pinned to a full commit id (--engine-commit, the action's
// sha) whose engine checkout is at another commit: the results would record the pinned commit
// for what another one measured. A run that builds nothing from a checkout (build none, no
// engine.source) has nothing to check: its commit is recorded as given.
func checkPinnedSource(ctx context.Context, o session, spec engine.BuildSpec) error {
	pinned := strings.ToLower(strings.TrimSpace(o.Engine.Commit))
	if !store.IsCommit(pinned) || (spec.Mode == engine.ModeNone && o.Engine.Source == "") {
		return nil
	}
	src := o.Engine.Source
	if src == "" {
		src = "."
	}
	if err := engine.CheckPinned(ctx, nil, src, pinned); err != nil {
		return settingsf("engine.source: %w", err)
	}
	return nil
}

// EngineBuildSpec turns engine.{source, build, keep, cache_dir} into the build's spec.
func EngineBuildSpec(o Settings) (engine.BuildSpec, error) {
	e := o.Engine
	spec := engine.BuildSpec{Engine: e.Name, Source: e.Source, CacheDir: e.CacheDir, Keep: e.Keep, Trust: engine.Trust(e.Trust), PrecompiledEnv: e.PrecompiledEnv}
	if e.Build.Mode == config.BuildCommand {
		spec.Mode, spec.Command = engine.ModeCommand, e.Build.Command
		return spec, nil
	}
	mode, err := engine.ParseMode(e.BuildMode())
	if err != nil {
		return spec, settingsf("engine.build: %v", err)
	}
	spec.Mode = mode
	return spec, nil
}

// clockLockError explains a refused gpu.lock_clocks.
func clockLockError(err error) error {
	switch {
	case errors.Is(err, engine.ErrNotPermitted):
		return fmt.Errorf("gpu.lock_clocks: %w; run speedmatrix as root (or grant the user the driver's permission), or set gpu.lock_clocks: false to measure at boost clocks (recorded as not locked)", err)
	case errors.Is(err, engine.ErrNoSMI):
		return fmt.Errorf("gpu.lock_clocks: %w; locking clocks needs nvidia-smi: install the driver's tools or set gpu.lock_clocks: false", err)
	}
	return fmt.Errorf("gpu.lock_clocks: %w", err)
}

// keyVarOfCommand returns NAME when the command passes --api-key ${NAME} (or --api-key=${NAME}),
// so that run sends the key the server was given without api_key_env saying it again.
func keyVarOfCommand(argv []string) string {
	s := engine.FlagValue(argv, "--api-key")
	if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && config.IsEnvName(s[2:len(s)-1]) {
		return s[2 : len(s)-1]
	}
	return ""
}

// enginePhases are how long each phase of a served run took, logged at the end so that the
// time spent building and loading (not measuring) is visible.
type enginePhases struct {
	build, load, measure, stop time.Duration
}

func (p *enginePhases) log(l *slog.Logger) {
	r := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	total := p.build + p.load + p.measure + p.stop
	l.Info("engine run phases", "build", r(p.build), "load", r(p.load), "measure", r(p.measure), "stop", r(p.stop), "total", r(total))
}

// chainFinish returns a finish for measureURL that runs each non-nil f in order.
func chainFinish(fs ...func(*results.File)) func(*results.File) {
	return func(f *results.File) {
		for _, fn := range fs {
			if fn != nil {
				fn(f)
			}
		}
	}
}

// engineRecord is what a served run adds to the results file.
type engineRecord struct {
	prov     engine.Provenance
	build    *engine.Build
	launch   string // redacted
	logPath  string
	hardware results.Hardware
	notes    []string
}

// apply records the engine's provenance, the launch command, the machine and the notes in f;
// it is idempotent, as measureURL calls it before every write.
func (r engineRecord) apply(f *results.File) {
	f.Engine.Build = string(r.prov.BuildMode)
	f.Engine.MergeBase = r.prov.MergeBase
	if f.Engine.Commit == "" {
		f.Engine.Commit = r.prov.Commit
	}
	if r.build != nil && r.build.Reason != "" {
		f.Engine.Extra = setKV(f.Engine.Extra, "build_reason", r.build.Reason)
	}
	if r.build != nil && r.build.Mode != engine.ModeNone {
		f.Engine.Extra = setKV(f.Engine.Extra, "build_cached", fmt.Sprint(r.build.Cached))
	}
	if r.build != nil && r.build.Dirty {
		f.Engine.Extra = setKV(f.Engine.Extra, "build_dirty", "true (built from a checkout with uncommitted changes)")
	}
	f.Engine.Extra = setKV(f.Engine.Extra, "server_log", r.logPath)
	f.Run.LaunchCommand = r.launch
	f.Hardware = mergeHardware(f.Hardware, r.hardware)
	for _, n := range r.notes {
		if !slices.Contains(f.Notes, n) {
			f.Notes = append(f.Notes, n)
		}
	}
}

// setKV sets key in kvs (a new slice: kvs may be shared with an earlier checkpoint).
func setKV(kvs []results.KV, key, value string) []results.KV {
	out := make([]results.KV, 0, len(kvs)+1)
	for _, kv := range kvs {
		if kv.Key != key {
			out = append(out, kv)
		}
	}
	return append(out, results.KV{Key: key, Value: value})
}

// hardwareFromFingerprint maps the machine's fingerprint into the results' hardware: the GPU
// model, count, memory per GPU (decimal GB), driver and CUDA, the clocks (locked by lock, or
// the current and maximum ones), power limit and persistence mode (of the first GPU; "mixed"
// when they differ), CPU model, OS and the other GPU processes. Without nvidia-smi the GPU
// facts stay empty (unknown; the fingerprint's note says why), so that compare does not take
// "unknown" for a different GPU.
func hardwareFromFingerprint(fp engine.Fingerprint, lock *engine.ClockLock) results.Hardware {
	h := results.Hardware{CPUModel: fp.CPUModel, OS: fp.OS}
	if fp.Kernel != "" {
		if h.OS != "" {
			h.OS += ", "
		}
		h.OS += "Linux " + fp.Kernel
	}
	for _, a := range fp.OtherGPUProcesses {
		h.OtherGPUProcesses = append(h.OtherGPUProcesses, a.String())
	}
	if len(fp.GPUs) == 0 {
		return h
	}
	g := fp.GPUs[0]
	h.GPU, h.GPUCount = fp.GPUModel(), len(fp.GPUs)
	if g.MemoryTotalMiB > 0 {
		h.VRAMPerGPUGB = math.Round(float64(g.MemoryTotalMiB)*1.048576/100) / 10 // MiB to decimal GB, one decimal
	}
	h.Driver, h.CUDA = fp.DriverVersion, fp.CUDAVersion
	h.PowerLimitW, h.PersistenceMode = g.PowerLimitW, g.PersistenceMode
	for _, o := range fp.GPUs[1:] {
		if o.PersistenceMode != g.PersistenceMode {
			h.PersistenceMode = "mixed"
		}
		if o.PowerLimitW != g.PowerLimitW {
			h.Extra = setKV(h.Extra, "power_limits_w", powerLimits(fp.GPUs))
		}
	}
	if lock != nil && len(lock.GPUs) > 0 {
		h.ClocksLocked = true
		l := lock.GPUs[0]
		h.Clocks = fmt.Sprintf("locked: SM %d MHz", l.SMClockMHz)
		if l.MemClockMHz > 0 {
			h.Clocks += fmt.Sprintf(", memory %d MHz", l.MemClockMHz)
		} else {
			h.Clocks += ", memory not locked"
		}
		return h
	}
	var parts []string
	if g.SMClockMHz > 0 {
		parts = append(parts, fmt.Sprintf("SM %d MHz", g.SMClockMHz))
	}
	if g.MemClockMHz > 0 {
		parts = append(parts, fmt.Sprintf("memory %d MHz", g.MemClockMHz))
	}
	if g.MaxSMClockMHz > 0 {
		parts = append(parts, fmt.Sprintf("max SM %d MHz", g.MaxSMClockMHz))
	}
	if g.MaxMemClockMHz > 0 {
		parts = append(parts, fmt.Sprintf("max memory %d MHz", g.MaxMemClockMHz))
	}
	h.Clocks = "not locked"
	if len(parts) > 0 {
		h.Clocks += " (" + strings.Join(parts, ", ") + ")"
	}
	return h
}

func powerLimits(gpus []engine.GPU) string {
	var s []string
	for _, g := range gpus {
		s = append(s, fmt.Sprintf("%d: %g", g.Index, g.PowerLimitW))
	}
	return strings.Join(s, ", ")
}

// mergeHardware returns given with every fact it lacks taken from measured: what the
// configuration or the flags said wins.
func mergeHardware(given, measured results.Hardware) results.Hardware {
	h := given
	str := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	str(&h.Type, measured.Type)
	str(&h.GPU, measured.GPU)
	if h.GPUCount == 0 {
		h.GPUCount = measured.GPUCount
	}
	if h.VRAMPerGPUGB == 0 {
		h.VRAMPerGPUGB = measured.VRAMPerGPUGB
	}
	str(&h.Driver, measured.Driver)
	if h.Clocks == "" {
		h.Clocks, h.ClocksLocked = measured.Clocks, measured.ClocksLocked
	}
	str(&h.OS, measured.OS)
	if h.PowerLimitW == 0 {
		h.PowerLimitW = measured.PowerLimitW
	}
	str(&h.PersistenceMode, measured.PersistenceMode)
	str(&h.CPUModel, measured.CPUModel)
	str(&h.CUDA, measured.CUDA)
	if h.OtherGPUProcesses == nil {
		h.OtherGPUProcesses = measured.OtherGPUProcesses
	}
	for _, kv := range measured.Extra {
		if !slices.ContainsFunc(h.Extra, func(x results.KV) bool { return x.Key == kv.Key }) {
			h.Extra = append(slices.Clip(h.Extra), kv)
		}
	}
	return h
}

// localHardware returns a finish for measureURL that records this machine's GPUs when the
// server of `run --url` is on this machine (a loopback URL) and nvidia-smi answers; facts the
// flags or the configuration gave win. For a remote server, or without nvidia-smi, it returns
// nil: this machine's GPUs say nothing of the server's.
func localHardware(ctx context.Context, rawURL string) func(*results.File) {
	if !isLoopbackURL(rawURL) {
		return nil
	}
	fp := engine.Hardware(ctx)
	if len(fp.GPUs) == 0 {
		return nil
	}
	h := hardwareFromFingerprint(fp, nil)
	return func(f *results.File) { f.Hardware = mergeHardware(f.Hardware, h) }
}

// isLoopbackURL reports whether rawURL's host is this machine (localhost or a loopback address).
func isLoopbackURL(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// engineSecrets are the secret values a served run knows: the API key (api_key_env), the value
// of every ${NAME} the command or its environment references whose name is secret-looking
// (redact.IsSecretVar: *TOKEN*, *KEY*, *SECRET*…), the values of engine.serve.env's
// secret-looking variables, and the values the launch command gives secret-looking flags
// (--api-key X, --hf-token=X). They are redacted from the recorded command, the server's log
// file and every error.
type engineSecrets struct {
	values []string
}

func newEngineSecrets(env *Deps, o session, serve config.Serve) *engineSecrets {
	s := &engineSecrets{}
	if o.APIKeyEnv != "" {
		s.add(env.Getenv(o.APIKeyEnv))
	}
	for _, name := range serve.References() {
		if redact.IsSecretVar(name) || name == o.APIKeyEnv {
			s.add(env.Getenv(name))
		}
	}
	for _, name := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "VLLM_API_KEY"} {
		s.add(env.Getenv(name)) // the server inherits them (engine.ProcessEnv) and may print them
	}
	for k, v := range serve.Env {
		if redact.IsSecretVar(k) && !strings.Contains(v, "${") {
			s.add(v) // a literal secret in the file; expanded ones are added above
		}
	}
	for _, v := range secretArgValues(serve.Command) {
		if !strings.Contains(v, "${") {
			s.add(v) // a literal secret in the file; the expanded command's are added once it runs
		}
	}
	return s
}

// mask asks GitHub Actions, when running in it, to mask every known secret value in the job's
// log (::add-mask::), before the build or the server can print one.
func (s *engineSecrets) mask(env *Deps) {
	if env.Getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	a := githubactions.New(githubactions.WithWriter(env.Stderr), githubactions.WithGetenv(env.Getenv))
	for _, v := range s.values {
		a.AddMask(v)
	}
}

// add adds known secret values; empty ones and repeats are ignored.
func (s *engineSecrets) add(vals ...string) {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
}

// secretArgValues returns the secrets of an argument list that redact.Args hides by their place
// (redact.ArgSecrets: a secret-looking flag's value, NAME=value, an Authorization header), so
// that the log file and the errors hide them as the recorded command does.
func secretArgValues(argv []string) []string { return redact.ArgSecrets(argv) }

// text returns s with every known secret redacted.
func (s *engineSecrets) text(t string) string { return redact.Text(t, s.values...) }

// launchCommand returns the command as run, for the results and the log: the server's
// environment additions (NAME=value, sorted), then its arguments, each shell-quoted where
// needed, with every secret redacted.
func (s *engineSecrets) launchCommand(argv []string, extraEnv map[string]string) string {
	var words []string
	renv := redact.Env(extraEnv, redact.WithValues(s.values...))
	for _, k := range slices.Sorted(maps.Keys(renv)) {
		words = append(words, k+"="+shellWord(renv[k]))
	}
	for _, a := range redact.Args(argv, redact.WithValues(s.values...)) {
		words = append(words, shellWord(a))
	}
	return strings.Join(words, " ")
}

// shellWord quotes a for a shell when it needs it; redact.Marker stays bare, the form the
// reference report records.
func shellWord(a string) string {
	if plain := strings.ReplaceAll(a, redact.Marker, "_"); textout.ShellQuote(plain) == plain {
		return a
	}
	return textout.ShellQuote(a)
}

// redactFile redacts the known secrets from the server's log file in place (vLLM logs its
// non-default arguments, the API key among them). A failure is logged: the file is the
// server's, and the run's results do not depend on it.
func (s *engineSecrets) redactFile(env *Deps, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			env.Log.Warn("server log not redacted", "log", path, "err", err)
		}
		return
	}
	red := s.text(string(data))
	if red == string(data) {
		return
	}
	if err := results.WriteFileAtomic(path, []byte(red)); err != nil {
		env.Log.Warn("server log not redacted; delete it before sharing it", "log", path, "err", err)
	}
}

// redactError returns err with every known secret redacted from its message; errors.Is and
// errors.As still see the original.
func (s *engineSecrets) redactError(err error) error {
	if err == nil {
		return nil
	}
	msg := s.text(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// engineError is the engine failing to build or to serve (phase names what, as the
// configuration's key: "engine.build", "engine.serve"); bisect skips a commit it stops.
type engineError struct {
	phase string
	err   error
}

func (e *engineError) Error() string { return e.phase + ": " + e.err.Error() }
func (e *engineError) Unwrap() error { return e.err }

// EngineFailed reports whether err is, or wraps, the engine failing to build or to serve.
func EngineFailed(err error) bool {
	var ee *engineError
	return errors.As(err, &ee)
}

// redactedError is an error whose message had secrets redacted.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
