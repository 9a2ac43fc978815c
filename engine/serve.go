package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/envexpand"
	"github.com/speedmatrix/speedmatrix/internal/redact"
)

// ServeSpec says how to start an inference server and when it is ready.
type ServeSpec struct {
	// Command is the server's argv, run without a shell. ${PORT} is replaced by the port and
	// other ${NAME}s through Expand.
	Command []string
	// Env is added to the server's environment, values expanded like Command.
	Env map[string]string
	// Port is the port the server listens on; 0 picks a free one.
	Port int
	// Host is where readiness is checked and the URL points (default 127.0.0.1).
	Host string
	// Model is the model /v1/models must list; empty: the model named by Command (vllm serve
	// MODEL, --model, --served-model-name), or any model when Command names none.
	Model string
	// APIKey is sent to /v1/models; empty: the value of --api-key in Command, or VLLM_API_KEY
	// of the server's environment.
	APIKey string
	// ReadyTimeout bounds the wait for readiness (default 10m); StopGrace is the time between
	// SIGTERM and SIGKILL (default 30s).
	ReadyTimeout, StopGrace time.Duration
	// LogPath receives the server's stdout and stderr with Secrets redacted, line by line as
	// they are written (default: a new file in os.TempDir()); it may be in the artifact.
	LogPath string
	// Secrets are the secret values the server knows; with the values of its secret-looking
	// arguments and configured variables they are redacted from LogPath.
	Secrets []string
	// RawLogDir receives the unredacted log, mode 0600, never in the artifact (default
	// os.TempDir()); RawLogPath says where.
	RawLogDir string
	// Dir is the server's working directory (default: the current one; Build.ServeSpec sets
	// the checkout of the commit it serves).
	Dir string
	// Sandbox, when set, confines the server (sandbox.go); it needs Reaper. Build.ServeSpec
	// adds the build's directories to it, and drops it for a docker build.
	Sandbox *Sandbox
	// Expand looks up ${NAME}s other than PORT; nil: BaseEnv.
	Expand Expander
	// BaseEnv is the environment the server inherits (default os.Environ()), allow-listed by
	// ProcessEnv: the job's GitHub context, inputs and runner tokens never reach the server.
	BaseEnv []string
	// Reaper, when set, is the argv of a program that hands ReaperArg to Reap (speedmatrix):
	// the server then runs under it, so that its whole process group dies with this process,
	// however this process dies (see startGroup).
	Reaper []string
	// AfterStop, when set, runs (argv, no shell) once the server's process group is gone, e.g.
	// docker rm -f of its container.
	AfterStop []string
	// GPU checks the GPUs are free before the start and released after the stop.
	GPU GPUWatch
	// Poll is the interval of the readiness checks (default 500ms).
	Poll time.Duration
	// Log receives progress; nil: discarded.
	Log *slog.Logger
}

// GPUWatch checks the GPUs with nvidia-smi around a server's life.
type GPUWatch struct {
	SMI SMI // nil: nvidia-smi on PATH; without nvidia-smi the checks are skipped with a note
	// AllowBusy starts the server although other processes hold a GPU.
	AllowBusy bool
	// ReleaseTimeout bounds the wait after the stop for the GPU memory to be released (default
	// 2m); SlackMiB is how far above the level before the start memory.used may stay (default
	// 1024).
	ReleaseTimeout time.Duration
	SlackMiB       int
	// Poll is the interval of the release checks (default 500ms).
	Poll time.Duration
}

// Server is a started inference server: the leader of its own process group.
type Server struct {
	spec    ServeSpec
	log     *slog.Logger
	argv    []string
	env     []string
	port    int
	url     string
	model   string
	logPath string
	g       *group
	logFile *os.File
	rawLog  *os.File
	rawPath string
	copied  chan struct{} // closed when the copy of the server's output to the logs is done
	secrets []string
	notes   []string

	baseApps []ComputeApp // GPU processes before the start
	baseUsed []int        // memory.used of every GPU before the start
	smiOK    bool         // nvidia-smi answered before the start

	stopOnce sync.Once
	stopErr  error
	stopped  chan struct{}
	killed   bool
}

// StartServer starts the server of spec and waits until it is ready: GET /health answers 200
// and GET /v1/models lists the model. It fails early, with the last log lines, when the
// process exits during the load, and stops the process group when ReadyTimeout passes or ctx
// ends. Once started, the server runs until Stop or until ctx ends, which stops it too.
func StartServer(ctx context.Context, spec ServeSpec) (*Server, error) {
	if len(spec.Command) == 0 {
		return nil, errors.New("serve: no command; set engine.serve.command")
	}
	s := &Server{spec: spec, log: spec.Log, stopped: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if spec.Host == "" {
		s.spec.Host = "127.0.0.1"
	}
	if spec.ReadyTimeout <= 0 {
		s.spec.ReadyTimeout = 10 * time.Minute
	}
	if spec.StopGrace <= 0 {
		s.spec.StopGrace = 30 * time.Second
	}
	if spec.Poll <= 0 {
		s.spec.Poll = 500 * time.Millisecond
	}
	if spec.BaseEnv == nil {
		s.spec.BaseEnv = os.Environ()
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	if err := s.checkGPUsFree(ctx); err != nil {
		return nil, err
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		serr := s.Stop(context.WithoutCancel(ctx))
		var pe *ProcessError
		if errors.As(err, &pe) || serr == nil {
			return nil, err
		}
		return nil, errors.Join(err, serr)
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Stop(context.WithoutCancel(ctx))
		case <-s.stopped:
		}
	}()
	return s, nil
}

// prepare picks the port and expands the command and its environment.
func (s *Server) prepare() error {
	s.port = s.spec.Port
	if s.port == 0 {
		p, err := freePort(s.spec.Host)
		if err != nil {
			return fmt.Errorf("serve: pick a free port: %w", err)
		}
		s.port = p
	}
	base := envMap(s.spec.BaseEnv)
	lookup := func(name string) (string, bool) {
		if name == "PORT" {
			return strconv.Itoa(s.port), true
		}
		if s.spec.Expand != nil {
			return s.spec.Expand(name)
		}
		v, ok := base[name]
		return v, ok
	}
	for _, a := range s.spec.Command {
		v, err := envexpand.Expand(a, lookup)
		if err != nil {
			return fmt.Errorf("serve: command: %w", err)
		}
		s.argv = append(s.argv, v)
	}
	var after []string
	for _, a := range s.spec.AfterStop {
		v, err := envexpand.Expand(a, lookup)
		if err != nil {
			return fmt.Errorf("serve: after-stop command: %w", err)
		}
		after = append(after, v)
	}
	s.spec.AfterStop = after
	added := map[string]string{}
	var configured []string
	for _, k := range sortedKeys(s.spec.Env) {
		v, err := envexpand.Expand(s.spec.Env[k], lookup)
		if err != nil {
			return fmt.Errorf("serve: env %s: %w", k, err)
		}
		configured = append(configured, k+"="+v)
		added[k] = v
	}
	var dropped []string
	s.env, dropped = ProcessEnv(s.spec.BaseEnv, configured) // env.go: allow-listed
	if len(dropped) > 0 {
		s.log.Warn("engine.serve.env: variables the server may not be given were dropped (the job's GitHub context, inputs and runner tokens)", "names", strings.Join(dropped, ","))
	}
	s.model = s.spec.Model
	if s.model == "" {
		s.model = ModelFromCommand(s.argv)
	}
	if s.spec.APIKey == "" {
		s.spec.APIKey = FlagValue(s.argv, "--api-key")
	}
	if s.spec.APIKey == "" {
		if v, ok := added["VLLM_API_KEY"]; ok {
			s.spec.APIKey = v
		} else {
			s.spec.APIKey = base["VLLM_API_KEY"]
		}
	}
	s.url = "http://" + net.JoinHostPort(s.spec.Host, strconv.Itoa(s.port))
	s.secrets = append(append([]string(nil), s.spec.Secrets...), redact.ArgSecrets(s.argv)...)
	for k, v := range added {
		if redact.IsSecretVar(k) {
			s.secrets = append(s.secrets, v)
		}
	}
	if s.spec.APIKey != "" {
		s.secrets = append(s.secrets, s.spec.APIKey)
	}
	return nil
}

// start starts the process group with its output to the log file.
func (s *Server) start() error {
	s.logPath = s.spec.LogPath
	var f *os.File
	var err error
	if s.logPath == "" {
		f, err = os.CreateTemp("", "speedmatrix-server-*.log")
		if err == nil {
			s.logPath = f.Name()
		}
	} else {
		if err = os.MkdirAll(filepath.Dir(s.logPath), 0o755); err == nil {
			f, err = os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("serve: server log: %w", err)
	}
	s.logFile = f
	raw, err := os.CreateTemp(s.spec.RawLogDir, "speedmatrix-server-raw-*.log") // mode 0600
	if err != nil {
		f.Close()
		return fmt.Errorf("serve: raw server log: %w", err)
	}
	s.rawLog, s.rawPath = raw, raw.Name()
	pr, pw, err := os.Pipe()
	if err != nil {
		f.Close()
		raw.Close()
		return fmt.Errorf("serve: %w", err)
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = s.env
	cmd.Dir = s.spec.Dir
	cmd.Stdout, cmd.Stderr = pw, pw
	s.g, err = startGroup(cmd, s.spec.Reaper, s.spec.Sandbox)
	pw.Close() // the server's processes hold the write end now
	if err != nil {
		pr.Close()
		f.Close()
		raw.Close()
		var se *SandboxError
		if errors.As(err, &se) {
			return err
		}
		return fmt.Errorf("serve: start %s: %w", s.argv[0], err)
	}
	// The output is redacted as it is written: the log (perhaps in the artifact) never holds a
	// known secret, whenever this process stops; the raw one stays outside, mode 0600.
	s.copied = make(chan struct{})
	go func() {
		defer close(s.copied)
		defer pr.Close()
		lw := redact.NewLineWriter(f, s.secrets...)
		_, _ = io.Copy(io.MultiWriter(raw, lw), pr)
		_ = lw.Flush()
	}()
	s.log.Info("server started", "pid", s.g.pgid, "port", s.port, "log", s.logPath, "raw_log", s.rawPath)
	return nil
}

// waitCopied waits (at most d) until the server's output is all in the logs: the pipe ends
// once every process holding it is gone.
func (s *Server) waitCopied(d time.Duration) {
	if s.copied == nil {
		return
	}
	select {
	case <-s.copied:
	case <-time.After(d):
	}
}

// waitReady polls /health and /v1/models until both answer, the process exits, the timeout
// passes or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.NewTimer(s.spec.ReadyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(s.spec.Poll)
	defer tick.Stop()
	client := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	for {
		ready, err := s.ready(ctx, client)
		if err != nil {
			return err
		}
		if ready {
			s.log.Info("server ready", "url", s.url, "model", s.model, "after", time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-s.g.done:
			s.waitCopied(2 * time.Second)
			code, sig := exitStatus(s.g.cmd.ProcessState)
			return &ProcessError{What: "server", Reason: "exited during load", ExitCode: code, Signal: sig,
				Hint: EnvHint(s.spec.BaseEnv, s.env, s.script()), Log: s.logPath, Tail: tailFile(s.logPath, TailLines)}
		case <-deadline.C:
			return &ProcessError{What: "server", ExitCode: -1, Log: s.logPath, Tail: tailFile(s.logPath, TailLines),
				Reason: fmt.Sprintf("not ready after %v (GET /health and /v1/models listing %q); raise engine.serve.ready_timeout if the model loads slowly", s.spec.ReadyTimeout, s.model)}
		case <-ctx.Done():
			return fmt.Errorf("serve: waiting for the server: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// script returns the path of the command's program as the process saw it (relative to its
// working directory), for EnvHint to read when it is a launch script.
func (s *Server) script() string {
	if len(s.argv) == 0 {
		return ""
	}
	p := s.argv[0]
	if !strings.Contains(p, "/") {
		if lp, err := exec.LookPath(p); err == nil {
			return lp
		}
		return ""
	}
	if !filepath.IsAbs(p) && s.g != nil && s.g.cmd.Dir != "" {
		p = filepath.Join(s.g.cmd.Dir, p)
	}
	return p
}

// ready asks /health and /v1/models once; an error is a definitive refusal (a wrong API key).
func (s *Server) ready(ctx context.Context, client *http.Client) (bool, error) {
	code, _, err := get(ctx, client, s.url+"/health", "")
	if err != nil || code != http.StatusOK {
		return false, nil
	}
	code, body, err := get(ctx, client, s.url+"/v1/models", s.spec.APIKey)
	if err != nil {
		return false, nil
	}
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		return false, fmt.Errorf("serve: GET /v1/models answered %d: the server wants an API key; give it with --api-key in the command or VLLM_API_KEY", code)
	}
	if code != http.StatusOK {
		return false, nil
	}
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &models) != nil {
		return false, nil
	}
	for _, m := range models.Data {
		if s.model == "" {
			s.model = m.ID
			return true, nil
		}
		if m.ID == s.model {
			return true, nil
		}
	}
	return false, nil
}

func get(ctx context.Context, client *http.Client, url, key string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// Stop stops the server: SIGTERM to its process group, SIGKILL after StopGrace, then it waits
// until no process of the group is left, runs AfterStop, and waits (bounded) until the GPU
// memory is released. It is safe to call more than once and from several goroutines; every
// call returns the first call's result.
func (s *Server) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		defer close(s.stopped)
		var errs []error
		if s.g != nil {
			s.killed = s.g.stop(s.spec.StopGrace)
			if s.killed {
				s.log.Warn("server ignored SIGTERM; killed", "grace", s.spec.StopGrace)
			}
			if !groupGone(s.g.pgid) {
				errs = append(errs, fmt.Errorf("serve: processes of group %d survive SIGKILL", s.g.pgid))
			}
		}
		s.waitCopied(5 * time.Second)
		if s.logFile != nil {
			s.logFile.Close()
		}
		if s.rawLog != nil {
			s.rawLog.Close()
		}
		if len(s.spec.AfterStop) > 0 {
			out, err := exec.CommandContext(ctx, s.spec.AfterStop[0], s.spec.AfterStop[1:]...).CombinedOutput()
			if err != nil {
				errs = append(errs, fmt.Errorf("serve: after stop, %s: %w: %s", strings.Join(s.spec.AfterStop, " "), err, strings.TrimSpace(string(out))))
			}
		}
		if err := s.waitGPUReleased(ctx); err != nil {
			errs = append(errs, err)
		}
		s.stopErr = errors.Join(errs...)
	})
	<-s.stopped
	return s.stopErr
}

// URL returns the server's base URL, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return s.url }

// Port returns the port the server listens on.
func (s *Server) Port() int { return s.port }

// Model returns the model the server lists.
func (s *Server) Model() string { return s.model }

// Argv returns the command as run, with ${NAME}s expanded. It holds secrets: redact it before
// it is written anywhere.
func (s *Server) Argv() []string { return append([]string(nil), s.argv...) }

// RawLogPath returns the file holding the server's output unredacted (mode 0600).
func (s *Server) RawLogPath() string { return s.rawPath }

// LogPath returns the file holding the server's output, known secrets redacted.
func (s *Server) LogPath() string { return s.logPath }

// PGID returns the server's process group.
func (s *Server) PGID() int { return s.g.pgid }

// Notes returns what the server could not check (e.g. no nvidia-smi).
func (s *Server) Notes() []string { return s.notes }

// Killed reports whether the stop needed SIGKILL.
func (s *Server) Killed() bool { return s.killed }

// Exited is closed when the server's leader process has exited (stopped or crashed).
func (s *Server) Exited() <-chan struct{} { return s.g.done }

// Err returns why the server exited by itself while serving, or nil while it runs or after
// a Stop.
func (s *Server) Err() error {
	select {
	case <-s.stopped:
		return nil
	default:
	}
	if !s.g.exited() {
		return nil
	}
	s.waitCopied(2 * time.Second)
	code, sig := exitStatus(s.g.cmd.ProcessState)
	return &ProcessError{What: "server", Reason: "exited while serving", ExitCode: code, Signal: sig,
		Log: s.logPath, Tail: tailFile(s.logPath, TailLines)}
}

// checkGPUsFree refuses to start when other processes hold a GPU, and records the memory in
// use so that the stop can wait for it to come back.
func (s *Server) checkGPUsFree(ctx context.Context) error {
	smi := smiOrDefault(s.spec.GPU.SMI)
	apps, err := ComputeApps(ctx, smi)
	if errors.Is(err, ErrNoSMI) {
		s.notes = append(s.notes, "nvidia-smi not found: GPUs not checked before the start nor after the stop")
		s.log.Info("nvidia-smi not found; not checking the GPUs are free")
		return nil
	}
	if err != nil {
		return fmt.Errorf("serve: check the GPUs are free: %w", err)
	}
	if len(apps) > 0 && !s.spec.GPU.AllowBusy {
		var list []string
		for _, a := range apps {
			list = append(list, a.String())
		}
		return fmt.Errorf("serve: the GPUs are busy: %s; stop those processes first, a measurement beside them is not worth keeping", strings.Join(list, ", "))
	}
	s.baseApps = apps
	s.baseUsed, _ = memoryUsed(ctx, smi)
	s.smiOK = true
	return nil
}

// waitGPUReleased waits until no compute process is left that was not there before the start
// and every GPU's memory.used is back within SlackMiB of its level before the start.
func (s *Server) waitGPUReleased(ctx context.Context) error {
	if !s.smiOK {
		return nil
	}
	w := s.spec.GPU
	if w.ReleaseTimeout <= 0 {
		w.ReleaseTimeout = 2 * time.Minute
	}
	if w.SlackMiB <= 0 {
		w.SlackMiB = 1024
	}
	if w.Poll <= 0 {
		w.Poll = 500 * time.Millisecond
	}
	smi := smiOrDefault(w.SMI)
	ctx, cancel := context.WithTimeout(ctx, w.ReleaseTimeout)
	defer cancel()
	known := map[int]bool{}
	for _, a := range s.baseApps {
		known[a.PID] = true
	}
	var why string
	for {
		why = ""
		apps, err := ComputeApps(ctx, smi)
		if err != nil {
			why = err.Error()
		}
		for _, a := range apps {
			if !known[a.PID] {
				why = "still holding a GPU: " + a.String()
				break
			}
		}
		if why == "" {
			used, err := memoryUsed(ctx, smi)
			if err != nil {
				why = err.Error()
			}
			for i := 0; i < len(used) && i < len(s.baseUsed); i++ {
				if used[i] > s.baseUsed[i]+w.SlackMiB {
					why = fmt.Sprintf("GPU %d memory.used %d MiB, %d MiB before the start", i, used[i], s.baseUsed[i])
					break
				}
			}
		}
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("serve: GPU memory not released %v after the stop (%s); check nvidia-smi before the next run", w.ReleaseTimeout, why)
		case <-time.After(w.Poll):
		}
	}
}

// ModelFromCommand returns the model a vLLM launch command serves: the first value of
// --served-model-name, else --model, else the positional argument after "serve".
func ModelFromCommand(argv []string) string {
	if v := FlagValue(argv, "--served-model-name"); v != "" {
		return v
	}
	if v := FlagValue(argv, "--model"); v != "" {
		return v
	}
	for i, a := range argv {
		if a == "serve" && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			return argv[i+1]
		}
	}
	return ""
}

// RandomWeights reports whether a vLLM launch command serves random weights (--load-format
// dummy, also inside a bash -c line): a model without trained weights loops by nature, so its
// output says nothing about the engine.
func RandomWeights(argv []string) bool {
	var words []string
	for _, a := range argv {
		words = append(words, strings.Fields(a)...)
	}
	return strings.Trim(FlagValue(words, "--load-format"), `"'`) == "dummy"
}

// FlagValue returns the value of --name VALUE or --name=VALUE in argv, or "".
func FlagValue(argv []string, name string) string {
	for i, a := range argv {
		if a == name && i+1 < len(argv) {
			return argv[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// freePort asks the kernel for a free TCP port on host.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
