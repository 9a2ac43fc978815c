package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/results"
)

// pairedEngine is one side's engine in a paired run with engine.serve: built once, then started
// before each of its blocks and stopped after it, so that only one engine holds the GPU (and its
// memory) at a time. The head's is engine (its source), the base's the same engine built from
// paired.base_source.
type pairedEngine struct {
	o       session // o.Engine is this side's
	bd      *engine.Build
	sec     *engineSecrets
	logPath string
	hw      engine.Fingerprint
	// lock is the clock lock of gpu.lock_clocks, held for the whole paired run; nil without.
	lock *engine.ClockLock
	// sandbox confines the build and the server; nil with engine.sandbox: none.
	sandbox *engine.Sandbox
}

// buildPairedEngine builds the engine of o from source; the server's output goes to logPath
// (appended to by every block, emptied first).
func buildPairedEngine(ctx context.Context, env *Deps, o session, source, logPath string) (*pairedEngine, error) {
	o.Engine.Source = source
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = keyVarOfCommand(o.Engine.Serve.Command)
	}
	sec := newEngineSecrets(env, o, *o.Engine.Serve)
	sec.mask(env)
	spec, err := EngineBuildSpec(o.Settings)
	if err != nil {
		return nil, err
	}
	spec.Secrets = sec.values
	if err := CheckEnginesCanDiffer(o.Settings, spec.Mode, source); err != nil {
		return nil, err
	}
	if err := checkOutputOutsideEngine(o, source); err != nil { // runengine_sandbox.go
		return nil, err
	}
	sandbox, err := prepareEngineRun(ctx, env, o) // runengine_sandbox.go
	if err != nil {
		return nil, err
	}
	spec.Sandbox = sandbox
	bd, err := (&engine.Builder{Getenv: env.Getenv, Stderr: env.Stderr, Log: env.Log, Reaper: EngineReaper()}).Build(ctx, spec)
	if err != nil {
		return nil, sec.redactError(&engineError{phase: "engine.build of " + source, err: err})
	}
	if err := os.Remove(logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("server log %s: %w", logPath, err)
	}
	return &pairedEngine{o: o, bd: bd, sec: sec, logPath: logPath, hw: engine.Hardware(ctx), sandbox: sandbox}, nil
}

// CheckEnginesCanDiffer refuses to measure two commits that serve the same installed engine:
// no build (engine.build: none) and a serve command that names no file of the commit's
// checkout source (engine.ServeUsesTree; empty: the current directory, where the server then
// runs), unless paired.allow_same_engine says to.
func CheckEnginesCanDiffer(o Settings, mode engine.Mode, source string) error {
	if source == "" {
		source = "." // no engine.source: the server runs in the current directory
	}
	if mode != engine.ModeNone || o.Paired.AllowSameEngine || engine.ServeUsesTree(o.Engine.Serve.Command, source) {
		return nil
	}
	return settingsf("engine.build is none and engine.serve.command %q names no file of the checkout %s: every commit serves the same installed engine, so two commits cannot measure apart. "+
		"Build each commit (engine.build), serve from its tree (e.g. command: [./serve.sh, \"${PORT}\"], run in the commit's checkout), or pass --allow-same-engine (paired.allow_same_engine) to measure anyway",
		strings.Join(o.Engine.Serve.Command, " "), source)
}

// serve starts the engine and returns its URL, the options to measure it with (its model,
// provenance), what its results record of it, and how to stop it.
func (p *pairedEngine) serve(ctx context.Context, env *Deps) (string, session, func(*results.File), func() error, error) {
	srv, err := startServer(ctx, env, p.o, p.bd, p.logPath, p.sec.values, p.sandbox) // runengine_serve.go
	if err != nil {
		p.sec.redactFile(env, p.logPath)
		return "", p.o, nil, nil, p.sec.redactError(&engineError{phase: "engine.serve", err: err})
	}
	o, rec := servedRun(ctx, env, p.o, srv, p.bd, p.sec, p.logPath, p.hw, p.lock)
	env.Log.Info("server ready; measuring", "url", srv.URL(), "model", srv.Model(), "source", o.Engine.Source, "log", p.logPath)
	finish := chainFinish(simulatorAtURL(ctx, env, &o), rec.apply)
	stop := func() error {
		err := srv.Stop(context.WithoutCancel(ctx))
		p.sec.redactFile(env, p.logPath)
		env.Log.Info("server stopped", "source", o.Engine.Source, "killed_after_grace", srv.Killed())
		if serr := srv.Err(); serr != nil {
			err = errors.Join(err, serr) // it exited while it was measured
		}
		if err != nil {
			return p.sec.redactError(&engineError{phase: "engine.serve", err: err})
		}
		return nil
	}
	return srv.URL(), o, finish, stop, nil
}
