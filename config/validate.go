package config

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
)

// Validate checks every setting's value and returns an Errors naming each bad one by its
// dotted path (and its line, when it came from a file), or nil.
func (c Config) Validate() error {
	v := &validator{c: &c}
	r := c.Run
	if r.URL != "" {
		u, err := url.Parse(r.URL)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
			v.fail("url", "%q: want a base URL like http://localhost:8000", r.URL)
		case u.User != nil:
			v.fail("url", "holds credentials (user:password@); name the variable holding the key with api_key_env instead")
		}
	}
	if r.APIKeyEnv != "" && !IsEnvName(r.APIKeyEnv) {
		v.fail("api_key_env", "%q: want the name of an environment variable (the key itself never goes in the file)", r.APIKeyEnv)
	}
	if r.Endpoint != results.EndpointCompletions && r.Endpoint != results.EndpointChat {
		v.fail("endpoint", "%q: want %s or %s", r.Endpoint, results.EndpointCompletions, results.EndpointChat)
	}
	if err := results.CheckMatrixName(r.Matrix); err != nil {
		v.fail("matrix", "%v", err)
	}
	v.contexts("contexts", r.Contexts)
	v.contexts("prefill_contexts", r.PrefillContexts)
	for i, s := range r.Concurrency {
		if n, err := strconv.Atoi(s); err != nil || n < 1 {
			v.fail(fmt.Sprintf("concurrency[%d]", i), "%q: want a whole number of at least 1", s)
		}
	}
	for i, s := range r.Cells {
		if _, err := results.ParseCellID(s); err != nil {
			v.fail(fmt.Sprintf("cells[%d]", i), "%v", err)
		}
	}
	if err := results.CheckWindow(time.Duration(r.Duration)); err != nil {
		v.fail("duration", "%v", err)
	}
	if r.MaxTokens < 2 {
		v.fail("max_tokens", "%d: want at least 2 (a request needs two tokens for a time between tokens)", r.MaxTokens)
	}
	if r.Trials < 1 {
		v.fail("trials", "%d: want at least 1", r.Trials)
	}
	if r.Warmup < 0 {
		v.fail("warmup", "%d: want 0 or more", r.Warmup)
	}
	v.positive("readiness_timeout", r.ReadyTimeout)
	v.positive("drain_timeout", r.DrainTimeout)
	v.positive("health_timeout", r.HealthTimeout)
	if r.Output == "" {
		v.fail("output", "want a file name")
	}
	if err := CheckBudget(time.Duration(r.Budget)); err != nil {
		v.fail("budget", "%v", err)
	}
	v.engine(r.Engine)
	v.specDecode(r)
	if r.Hardware.GPUCount < 0 {
		v.fail("hardware.gpu_count", "%d: want 0 or more", r.Hardware.GPUCount)
	}
	if r.Hardware.VRAMGB < 0 {
		v.fail("hardware.vram_per_gpu_gb", "%g: want 0 or more", r.Hardware.VRAMGB)
	}
	if x := r.Sim.Speedup; x != 0 { // 0: sim's default
		if err := sim.CheckSpeedup(x); err != nil { // the one check of the simulator's speed
			v.fail("sim.speedup", "%v", err)
		}
	}
	if r.Sim.Noise != nil && (*r.Sim.Noise < 0 || *r.Sim.Noise > 1) {
		v.fail("sim.noise", "%g: want a coefficient of variation between 0 and 1", *r.Sim.Noise)
	}
	if r.Paired.Blocks < 2 {
		v.fail("paired.blocks", "%d: want at least 2 (pairs to estimate the noise from)", r.Paired.Blocks)
	}
	if r.Paired.Scheme != PairedABBA && r.Paired.Scheme != PairedSequential {
		v.fail("paired.scheme", "%q: want %s or %s", r.Paired.Scheme, PairedABBA, PairedSequential)
	}
	switch r.Paired.Mode {
	case PairedModeOff, PairedModeAuto, PairedModeAlways:
	default:
		v.fail("paired.mode", "%q: want %s, %s or %s", r.Paired.Mode, PairedModeOff, PairedModeAuto, PairedModeAlways)
	}
	if g := c.GitHub.Comment; g != CommentAlways && g != CommentRegression && g != CommentNever {
		v.fail("github.comment", "%q: want %s, %s or %s", g, CommentAlways, CommentRegression, CommentNever)
	}
	if g := c.GitHub.Undecided; g != UndecidedFailure && g != UndecidedNeutral && g != UndecidedSuccess {
		v.fail("github.undecided", "%q: want %s, %s or %s", g, UndecidedFailure, UndecidedNeutral, UndecidedSuccess)
	}
	if g := c.GitHub.NoBaseline; g != NoBaselineNeutral && g != NoBaselineFailure {
		v.fail("github.no_baseline", "%q: want %s or %s", g, NoBaselineNeutral, NoBaselineFailure)
	}
	if g := c.GitHub.MergeQueue; g != MergeQueueReuse && g != MergeQueueRun {
		v.fail("github.merge_queue", "%q: want %s or %s", g, MergeQueueReuse, MergeQueueRun)
	}
	v.fraction("compare.fdr", c.Compare.FDR)
	v.fraction("compare.false_alarm", c.Compare.FalseAlarm)
	metrics := slices.Concat(results.Metrics(results.PhaseDecode), results.Metrics(results.PhasePrefill), []results.Metric{results.MetricSpecAcceptance})
	names := make([]string, 0, len(metrics))
	for _, m := range metrics {
		if !slices.Contains(names, string(m)) {
			names = append(names, string(m))
		}
	}
	keys := make([]string, 0, len(c.Compare.Thresholds))
	for k := range c.Compare.Thresholds {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := "compare.thresholds." + k
		if !slices.Contains(names, k) {
			v.fail(p, "unknown metric (known: %s)", strings.Join(names, ", "))
		} else if d := c.Compare.Thresholds[k]; d < 0 || d >= 1 {
			v.fail(p, "%g: want a fraction from 0 to below 1 (0.03 is 3 %%)", d)
		}
	}
	for _, n := range []struct {
		path string
		v    int
	}{{"store.retention.keep", c.Store.Retention.Keep}, {"store.retention.keep_aa", c.Store.Retention.KeepAA},
		{"store.retention.pr_days", c.Store.Retention.PRDays}, {"store.aa_every", c.Store.AAEvery}} {
		if n.v < 0 {
			v.fail(n.path, "%d: want 0 or more (0: no bound)", n.v)
		}
	}
	c.Bisect.validate(v) // bisect.go
	if c.Store.MinHistory < 2 {
		v.fail("store.min_history", "%d: want 2 or more (a variance needs two runs; 10 is the default)", c.Store.MinHistory)
	}
	if len(v.errs) == 0 {
		return nil
	}
	// In file order; settings not from the file (defaults, flags) after.
	slices.SortStableFunc(v.errs, func(a, b *Error) int {
		switch {
		case (a.Line == 0) != (b.Line == 0):
			return map[bool]int{true: 1, false: -1}[a.Line == 0]
		case a.Line != b.Line:
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	return v.errs
}

func (v *validator) engine(e Engine) {
	switch m := e.Build.Mode; {
	case m == "" || slices.Contains(BuildModes, m):
	case m == BuildCommand:
		if strings.TrimSpace(e.Build.Command) == "" {
			v.fail("engine.build.command", "want a command")
		}
	default:
		v.fail("engine.build", "%q: want %s or {command: \"...\"}", m, strings.Join(BuildModes, ", "))
	}
	if e.Keep < 1 {
		v.fail("engine.keep", "%d: want at least 1 (the environment being measured)", e.Keep)
	}
	if e.Build.Mode != "" && e.Build.Mode != BuildNone && e.Source == "" {
		v.fail("engine.build", "%q needs engine.source, the checkout to build", e.Build.String())
	}
	if m := e.BuildMode(); e.PrecompiledEnv != "" && m != BuildPrecompiled && m != BuildAuto {
		v.fail("engine.precompiled_env", "set, but engine.build is %q: it gives the compiled files of precompiled builds (engine.build: precompiled or auto); remove it or change the build", e.Build.String())
	}
	if e.Sandbox != "" && e.Sandbox != "namespaces" && e.Sandbox != "none" {
		v.fail("engine.sandbox", "%q: want namespaces (the default: build and server in their own user, PID and mount namespaces) or none", e.Sandbox)
	}
	s := e.Serve
	if s == nil {
		return
	}
	if len(s.Command) == 0 {
		v.fail("engine.serve.command", "want the server's launch command, e.g. [vllm, serve, MODEL, --port, \"${PORT}\"]")
	}
	check := func(path, a string) {
		if _, err := Expand(a, func(string) (string, bool) { return "", true }); err != nil {
			v.fail(path, "%v", err)
		}
	}
	for i, a := range s.Command {
		check(fmt.Sprintf("engine.serve.command[%d]", i), a)
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !IsEnvName(k) {
			v.fail("engine.serve.env."+k, "not a variable name (letters, digits and _, not starting with a digit)")
		}
		check("engine.serve.env."+k, s.Env[k])
	}
	if s.Port < 0 || s.Port > 65535 {
		v.fail("engine.serve.port", "%d: want a port from 1 to 65535, or 0 to pick a free one", s.Port)
	}
	v.positive("engine.serve.ready_timeout", s.ReadyTimeout)
	if s.StopGrace < 0 {
		v.fail("engine.serve.stop_grace", "%v: want 0 or more", s.StopGrace)
	}
}

// validator collects the errors of Validate.
type validator struct {
	c    *Config
	errs Errors
}

func (v *validator) fail(path, format string, args ...any) {
	e := &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
	// The setting's own position, else its nearest parent's (a map key's, a list's).
	for p := path; p != ""; p = parent(p) {
		if at, ok := v.c.where[p]; ok {
			e.File, e.Line, e.Column = v.c.file, at.line, at.column
			break
		}
	}
	v.errs = append(v.errs, e)
}

func (v *validator) positive(path string, d Duration) {
	if d <= 0 {
		v.fail(path, "%v: want a positive duration like 30s", d)
	}
}

func (v *validator) fraction(path string, f float64) {
	if f < 0 || f >= 1 {
		v.fail(path, "%g: want a rate from 0 to below 1 (0: the default)", f)
	}
}

func (v *validator) contexts(path string, items List) {
	if len(items) == 1 && strings.EqualFold(items[0], "none") {
		return
	}
	for i, s := range items {
		if n, err := results.ParseContext(s); err != nil {
			v.fail(fmt.Sprintf("%s[%d]", path, i), "%v", err)
		} else if n < 1 {
			v.fail(fmt.Sprintf("%s[%d]", path, i), "%q: want at least 1 token", s)
		}
	}
}

// parent returns the path of the setting that holds path: a.b[2] → a.b, a.b → a, a → "".
func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// CheckBudget returns an error saying what to give unless d can be a job's GPU time budget
// (budget, run --budget): 0 for none, or a positive duration. It is the one check of the budget.
func CheckBudget(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%v: want 0 (no budget) or a positive duration like 45m", d)
	}
	return nil
}
