package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/results"
)

// pairedEngine is one side's engine in a paired run with engine.serve: built once, then started
// before each of its blocks and stopped after it, so that only one engine holds the GPU (and its
// memory) at a time. The head's is engine (its source), the base's the same engine built from
// paired.base_source.
type pairedEngine struct {
	o       runOptions // o.Engine is this side's
	bd      *engine.Build
	sec     *engineSecrets
	logPath string
	hw      engine.Fingerprint
	// lock is the clock lock of gpu.lock_clocks, held for the whole paired run; nil without.
	lock *engine.ClockLock
}

// buildPairedEngine builds the engine of o from source; the server's output goes to logPath
// (appended to by every block, emptied first).
func buildPairedEngine(ctx context.Context, env *Env, o runOptions, source, logPath string) (*pairedEngine, error) {
	o.Engine.Source = source
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = keyVarOfCommand(o.Engine.Serve.Command)
	}
	sec := newEngineSecrets(env, o, *o.Engine.Serve)
	spec, err := engineBuildSpec(o)
	if err != nil {
		return nil, err
	}
	bd, err := (&engine.Builder{Getenv: env.Getenv, Stderr: env.Stderr, Log: env.Log}).Build(ctx, spec)
	if err != nil {
		return nil, sec.redactError(fmt.Errorf("engine.build of %s: %w", source, err))
	}
	if err := os.Remove(logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("server log %s: %w", logPath, err)
	}
	return &pairedEngine{o: o, bd: bd, sec: sec, logPath: logPath, hw: engine.Hardware(ctx)}, nil
}

// serve starts the engine and returns its URL, the options to measure it with (its model,
// provenance), what its results record of it, and how to stop it.
func (p *pairedEngine) serve(ctx context.Context, env *Env) (string, runOptions, func(*results.File), func() error, error) {
	o := p.o
	serve := *o.Engine.Serve
	lookup := func(name string) (string, bool) { v := env.Getenv(name); return v, v != "" }
	var key string
	if o.APIKeyEnv != "" {
		key = env.Getenv(o.APIKeyEnv)
	}
	srv, err := engine.StartServer(ctx, p.bd.ServeSpec(engine.ServeSpec{
		Command: serve.Command, Env: serve.Env, Port: serve.Port, Model: o.Model, APIKey: key,
		ReadyTimeout: serve.ReadyTimeout, StopGrace: serve.StopGrace, LogPath: p.logPath,
		Expand: lookup, Log: env.Log,
	}))
	if err != nil {
		p.sec.redactFile(env, p.logPath)
		return "", o, nil, nil, p.sec.redactError(fmt.Errorf("engine.serve: %w", err))
	}
	expanded, _ := serve.Expanded(func(name string) (string, bool) {
		if name == "PORT" {
			return fmt.Sprint(srv.Port()), true
		}
		return lookup(name)
	})
	p.sec.add(secretArgValues(srv.Argv())...)
	prov := srv.Provenance(ctx, p.bd)
	rec := engineRecord{prov: prov, build: p.bd, logPath: p.logPath,
		launch: p.sec.launchCommand(srv.Argv(), expanded.Env), hardware: hardwareFromFingerprint(p.hw, p.lock)}
	for _, n := range p.hw.Notes {
		rec.notes = append(rec.notes, "hardware: "+n)
	}
	for _, n := range srv.Notes() {
		rec.notes = append(rec.notes, "server: "+n)
	}
	if p.lock != nil {
		for _, w := range p.lock.Warnings {
			rec.notes = append(rec.notes, "gpu.lock_clocks: "+w)
		}
	}
	if o.Engine.Name == "" {
		o.Engine.Name = prov.Engine
	}
	if o.Engine.Version == "" {
		o.Engine.Version = prov.Version
	}
	if o.Engine.Commit == "" {
		o.Engine.Commit = prov.Commit
	}
	if o.Model == "" {
		o.Model = srv.Model()
	}
	o.URL = srv.URL()
	o.LaunchCommand = ""
	env.Log.Info("server ready; measuring", "url", srv.URL(), "model", srv.Model(), "source", o.Engine.Source, "log", p.logPath)
	finish := chainFinish(simulatorAtURL(ctx, env, o), rec.apply)
	stop := func() error {
		err := srv.Stop(context.WithoutCancel(ctx))
		p.sec.redactFile(env, p.logPath)
		env.Log.Info("server stopped", "source", o.Engine.Source, "killed_after_grace", srv.Killed())
		if serr := srv.Err(); serr != nil {
			err = errors.Join(err, serr) // it exited while it was measured
		}
		if err != nil {
			return p.sec.redactError(fmt.Errorf("engine.serve: %w", err))
		}
		return nil
	}
	return srv.URL(), o, finish, stop, nil
}
