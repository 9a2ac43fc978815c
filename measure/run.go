package measure

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/redact"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// parseContexts reads a list of context lengths; "none" is the empty list.
func parseContexts(what string, items []string) ([]int, error) {
	if len(items) == 1 && strings.EqualFold(items[0], "none") {
		return []int{}, nil
	}
	var out []int
	for _, s := range items {
		n, err := results.ParseContext(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchConfig turns the options into the runner's configuration; errors are settings errors.
func benchConfig(o session, baseURL, runID string) (bench.Config, error) {
	cfg := bench.DefaultConfig()
	m, err := bench.MatrixByName(o.Matrix)
	if err != nil {
		return cfg, settingsf("--matrix: %v", err)
	}
	for _, l := range []struct {
		name, hint string
		v          config.List
	}{
		{"contexts", "e.g. 8K,32K, or leave it out for the matrix's", o.Contexts},
		{"concurrency", "e.g. 1,8,32, or leave it out for the matrix's", o.Concurrency},
		{"prefill-contexts", "e.g. 8K,16K, none for no prefill cells, or leave it out for the decode contexts' scouts", o.PrefillContexts},
		{"cells", "e.g. decode/8K/32,prefill/16K, or leave it out for the whole matrix", o.Cells},
	} {
		if l.v != nil && len(l.v) == 0 {
			return cfg, settingsf("--%s is empty (or %s: [] in the configuration): give a list, %s", l.name, strings.ReplaceAll(l.name, "-", "_"), l.hint)
		}
	}
	cfg.MatrixName = o.Matrix
	if o.Contexts != nil {
		if m.Contexts, err = parseContexts("--contexts", o.Contexts); err != nil {
			return cfg, settingsf("%v", err)
		}
	}
	if o.Concurrency != nil {
		m.Concurrency = nil
		for _, s := range o.Concurrency {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return cfg, settingsf("--concurrency %q: want positive whole numbers, e.g. 1,8,32", s)
			}
			m.Concurrency = append(m.Concurrency, n)
		}
	}
	if o.PrefillContexts != nil {
		if m.PrefillContexts, err = parseContexts("--prefill-contexts", o.PrefillContexts); err != nil {
			return cfg, settingsf("%v", err)
		}
		cfg.PrefillFromDecode = false
	}
	if o.Contexts != nil || o.Concurrency != nil || o.PrefillContexts != nil {
		cfg.MatrixName = "custom"
	}
	if len(o.Cells) > 0 {
		if cfg.Cells, err = results.ParseCells(o.Cells); err != nil {
			return cfg, settingsf("--cells: %v", err)
		}
	}
	if len(cfg.Cells) > 0 {
		cfg.MatrixName = "cells"
	}
	cfg.Matrix = m
	cfg.URL = baseURL
	cfg.Model = o.Model
	cfg.Endpoint = o.Endpoint
	cfg.Duration = o.Duration
	cfg.MaxTokens = o.MaxTokens
	cfg.Trials = o.Trials
	cfg.Warmup = o.Warmup
	if o.ContextWarmup != nil {
		cfg.ContextWarmup = *o.ContextWarmup
	}
	if o.Order != "" {
		cfg.Order = o.Order
	}
	if o.Remeasures != nil {
		cfg.Remeasures = *o.Remeasures
	}
	cfg.Timeouts.Readiness = o.ReadyTimeout
	cfg.Timeouts.Drain = o.DrainTimeout
	cfg.Timeouts.Health = o.HealthTimeout
	cfg.Timeouts = o.scaleSim(cfg.Timeouts) // model-time sampling against the simulator (runsim.go)
	cfg.RunID = runID
	cfg.Shard = o.shard
	cfg.LaunchCommand = redact.Command(o.LaunchCommand)
	cfg.Revision = o.Revision
	cfg.ToolVersion = o.version
	cfg.Engine = results.Engine{Name: o.Engine.Name, Version: o.Engine.Version, Commit: o.Engine.Commit,
		Quantization: o.Engine.Quantization, Backend: o.Engine.Backend, Repository: o.Engine.Repository, Build: o.Engine.Build.String()}
	cfg.Hardware = results.Hardware{Type: o.Hardware.Type, GPU: o.Hardware.GPU, GPUCount: o.Hardware.GPUCount,
		VRAMPerGPUGB: o.Hardware.VRAMGB, Driver: o.Hardware.Driver, Clocks: o.Hardware.Clocks, OS: o.Hardware.OS}
	if err := cfg.Check(); err != nil {
		return cfg, settingsf("%v", err)
	}
	return cfg, nil
}

// newRunID returns a run id unique across runs: the time and random bits.
func newRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// runCommand checks the options and measures the server at o.URL, else the server engine.serve
// starts, else the built-in simulator.
func runCommand(ctx context.Context, env *Deps, o session) error {
	if err := o.Check(); err != nil {
		return err
	}
	o.Engine.Commit = resolveEngineCommit(ctx, env, o.Engine.Commit, o.Engine.Source)
	if err := resolveShard(env, &o); err != nil { // run --shard (run_shard.go)
		return err
	}
	if o.SpecDecode.Pinned() {
		return runEnginePinned(ctx, env, o) // acceptance pass, then the pinned matrix (runengine_pinned.go)
	}
	if o.Paired.Enabled {
		return runPaired(ctx, env, o) // base and head alternately in blocks (run_paired.go)
	}
	if o.URL == "" && o.Engine.Serve != nil {
		return runEngine(ctx, env, o) // build, serve, measure and stop (runengine.go)
	}
	if o.URL == "" {
		return runSimulated(ctx, env, o)
	}
	// A `speedmatrix sim` says its speedup (runsim.go); a server on this machine runs on its GPUs (runengine.go).
	sim := simulatorAtURL(ctx, env, &o)
	return measureURL(ctx, env, o, o.URL, chainFinish(sim, localHardware(ctx, o.URL)))
}

// measureURL measures the server at baseURL with the options o and writes the results file.
// finish, when set, amends the results before they are written (e.g. the simulator's settings).
func measureURL(ctx context.Context, env *Deps, o session, baseURL string, finish func(*results.File)) error {
	key, err := apiKey(env, o) // runner.go
	if err != nil {
		return err
	}
	if strings.Contains(baseURL, "@") {
		return settingsf("--url must not hold credentials; put the key in a variable and name it with --api-key-env")
	}
	if err := checkURL(baseURL); err != nil {
		return err
	}
	runID := newRunID(env.now())
	cfg, r, closeRunner, err := newRunner(env, o, baseURL, key, runID) // runner.go
	if err != nil {
		return err
	}
	defer closeRunner()
	if err := prepareOutput(o.Output, env.Log); err != nil {
		return err
	}
	out := &output{path: o.Output, fallback: FallbackPath(runID), log: env.Log}
	write := func(f *results.File) error {
		if finish != nil {
			finish(f)
		}
		recordGPUTime(f, o) // run_adaptive.go
		return out.write(f)
	}
	r.Checkpoint = write
	if st, err := os.Stat(o.Output); err == nil && !st.Mode().IsRegular() {
		// A FIFO or /dev/stdout takes one document, the last: no checkpoints into it.
		r.Checkpoint = func(*results.File) error { return nil }
	}
	f, runErr := r.Run(ctx, cfg)
	if f == nil {
		return runErr
	}
	if err := write(f); err != nil {
		return err
	}
	logBudget(env.Log, f) // runprogress.go
	n := countCells(f)
	where := out.saved
	if out.saved != o.Output {
		where = fmt.Sprintf("%s (could not write %s: %v)", out.saved, o.Output, out.err)
	}
	switch {
	case out.invalid != nil:
		return fmt.Errorf("the results are in %s, but they fail the results file's own check, so compare and the store refuse them: %w; this is a bug of speedmatrix's measurement (please report it with the file): remove or fix the cells named to use the rest", where, errors.Join(runErr, out.invalid))
	case runErr != nil:
		pre, dec := f.Done() // as compare counts a partial head's cells
		return fmt.Errorf("%w; the %s measured so far (%d prefill, %d decode) are in %s, marked partial",
			runErr, textout.Plural(pre+dec, "cell", "cells"), pre, dec, where)
	case n.decode == 0 && n.decodeFailed > 0:
		return fmt.Errorf("every decode cell failed (%d of %d; the first: %s); the results are in %s", n.decodeFailed, len(f.Decode), n.firstError, where)
	case n.prefill+n.decode == 0 && n.prefillFailed > 0:
		return fmt.Errorf("every prefill cell failed (the first: %s); the results are in %s", n.firstError, where)
	case out.saved != o.Output:
		return fmt.Errorf("could not write %s (%v); the results are in %s instead", o.Output, out.err, out.saved)
	}
	env.Log.Info("run complete", "results", out.saved, "decode_cells_measured", n.decode, "decode_cells_failed", n.decodeFailed, "prefill_cells", len(f.Prefill))
	if o.Baseline != "" {
		return measureAdaptive(ctx, env, o, baseURL, finish, f, write) // run_adaptive.go
	}
	return nil
}

// cellCounts counts the cells of a results file by kind and outcome.
type cellCounts struct {
	prefill, decode             int // measured (valid or queued)
	prefillFailed, decodeFailed int // status error
	firstError                  string
}

// countCells counts the measured and failed cells of f.
func countCells(f *results.File) cellCounts {
	var n cellCounts
	fail := func(id, why string) {
		if n.firstError == "" {
			n.firstError = id + ": " + why
		}
	}
	for _, c := range f.Prefill {
		switch {
		case c.Status.Measured():
			n.prefill++
		case c.Status == results.StatusError:
			n.prefillFailed++
			fail("prefill/"+c.ContextLabel, c.Error)
		}
	}
	for _, c := range f.Decode {
		switch {
		case c.Status.Measured():
			n.decode++
		case c.Status == results.StatusError:
			n.decodeFailed++
			fail(fmt.Sprintf("decode/%s/%d", c.ContextLabel, c.Concurrency), c.Error)
		}
	}
	return n
}

// checkURL returns a settings error unless u is an http or https URL with a host.
func checkURL(u string) error {
	if !strings.Contains(u, "://") {
		return settingsf("--url %q has no scheme: add http:// (e.g. --url http://%s)", u, u)
	}
	p, err := url.Parse(u)
	if err != nil {
		return settingsf("--url %q: %v; want a URL like http://localhost:8000", u, err)
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return settingsf("--url %q: the scheme must be http or https, e.g. http://localhost:8000", u)
	}
	if p.Host == "" {
		return settingsf("--url %q has no host: want a URL like http://localhost:8000", u)
	}
	return nil
}

// prepareOutput checks, before the first request, that the results file can be written at path:
// a missing folder is created; a directory, a path under a file, or a folder that cannot be
// written is a settings error.
func prepareOutput(path string, log *slog.Logger) error {
	if path == "" {
		return settingsf("-o is empty: name the results file, e.g. -o results.json")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return settingsf("-o %s is a directory: name a file in it, e.g. -o %s", path, filepath.Join(path, "results.json"))
	} else if err == nil && !st.Mode().IsRegular() {
		return nil // /dev/null, a FIFO, /dev/stdout: written into (results.WriteOutput)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return settingsf("-o %s: cannot create the results file: %s is a file, not a folder; choose another path", path, dir)
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return settingsf("-o %s: cannot create the folder %s: %v; choose another path", path, dir, err)
		}
		log.Info("created the folder of the results file", "dir", dir)
	case err != nil:
		return settingsf("-o %s: cannot create the results file: %v; choose another path", path, err)
	}
	probe, err := os.CreateTemp(dir, ".speedmatrix-write-check-*")
	if err != nil {
		return settingsf("-o %s: cannot write in %s: %v; choose a writable path", path, dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// FallbackPath returns where the results go when the output path cannot be written mid-run: the
// temporary folder, named after the run.
func FallbackPath(runID string) string {
	return filepath.Join(os.TempDir(), "speedmatrix-"+runID+".json")
}

// output writes the results file, falling back to another path when the chosen one fails.
type output struct {
	path, fallback string
	log            *slog.Logger
	saved          string // where the last write went
	err            error  // why the last write to path failed
	// invalid is why the last results failed the results file's own check (results.Validate):
	// they are written all the same, so that a measurement is never lost to a bug of ours.
	invalid error
}

// write writes f to the output path, or, when that fails, to the fallback path (saying so once);
// the error is set only when neither could be written. Results that fail the file's own check
// are written unchecked (o.invalid says why): the run says so when it ends.
func (o *output) write(f *results.File) error {
	write := results.WriteOutputFile
	err := write(o.path, f)
	wasInvalid := o.invalid != nil
	o.invalid = nil
	if results.IsValidation(err) {
		if !wasInvalid {
			o.log.Error("the results fail the results file's own check; writing them unchecked so that nothing measured is lost", "output", o.path, "err", err)
		}
		o.invalid, write = err, results.WriteFileUnchecked
		err = write(o.path, f)
	}
	if err == nil {
		if o.saved == o.fallback {
			os.Remove(o.fallback) // the chosen path works again: one copy only
		}
		o.saved, o.err = o.path, nil
		return nil
	}
	if ferr := write(o.fallback, f); ferr != nil {
		return fmt.Errorf("write %s: %w; the fallback %s failed too: %v", o.path, err, o.fallback, ferr)
	}
	if o.saved != o.fallback {
		o.log.Warn("could not write the results file; writing it to the fallback file instead", "output", o.path, "err", err, "fallback", o.fallback)
	}
	o.saved, o.err = o.fallback, err
	return nil
}

// resolveEngineCommit returns the engine commit to record: a full commit id as given (lower
// case); a revision (a branch, HEAD~2, a short id) as the full id the engine's clone resolves it
// to (engine.source, else the current directory), which the results store and compare --store
// need to place the run; what neither is, as given, with a warning.
func resolveEngineCommit(ctx context.Context, env *Deps, rev, source string) string {
	rev = strings.TrimSpace(rev)
	if rev == "" {
		return ""
	}
	if id := strings.ToLower(rev); store.IsCommit(id) {
		return id
	}
	sha, err := store.GitCommits{Dir: source}.RevParse(ctx, rev)
	if err != nil {
		env.Log.Warn("the engine commit is recorded as given: it is not a full commit id and the engine's clone cannot resolve it, so the results store and compare --store cannot place the run (give --engine-commit a full id)", "engine_commit", rev)
		return rev
	}
	env.Log.Info("engine commit resolved in the engine's clone", "revision", rev, "commit", sha)
	return sha
}
