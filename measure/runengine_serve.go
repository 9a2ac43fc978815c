package measure

import (
	"context"
	"fmt"
	"os"

	"github.com/speedmatrix/speedmatrix/engine"
)

// envLookup returns the ${NAME} lookup of engine.serve: the environment's value, unset when empty.
func envLookup(env *Deps) func(string) (string, bool) {
	return func(name string) (string, bool) { v := env.Getenv(name); return v, v != "" }
}

// startServer starts the server of engine.serve (o.Engine.Serve) from the build bd, with the
// API key of api_key_env, its output appended to logPath, in sandbox (nil: none); it returns
// once the server answers.
func startServer(ctx context.Context, env *Deps, o session, bd *engine.Build, logPath string, secrets []string, sandbox *engine.Sandbox) (*engine.Server, error) {
	serve := *o.Engine.Serve
	var key string
	if o.APIKeyEnv != "" {
		key = env.Getenv(o.APIKeyEnv)
	}
	return engine.StartServer(ctx, bd.ServeSpec(engine.ServeSpec{
		Command: serve.Command, Env: serve.Env, Port: serve.Port, Model: o.Model, APIKey: key,
		ReadyTimeout: serve.ReadyTimeout, StopGrace: serve.StopGrace, LogPath: logPath,
		Expand: envLookup(env), Log: env.Log, Reaper: EngineReaper(),
		Secrets: secrets, RawLogDir: env.Getenv("RUNNER_TEMP"), // the raw log outside the artifact
		Sandbox: sandbox, // Build.ServeSpec adds the build's directories; none for docker
	}))
}

// EngineReaper returns the argv that runs this program as the reaper of an engine's process
// group (Run hands engine.ReaperArg to engine.Reap), so that no build or server process
// outlives speedmatrix, even SIGKILLed; nil (the leader killed with speedmatrix, what it
// started left to the stop) when the executable cannot be found.
func EngineReaper() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe}
}

// servedRun returns what a run records of the started server srv (built as bd, on the machine
// hw, with the clocks locked by lock or nil): its provenance, the launch command as run with
// every secret redacted (the secrets of its arguments added to sec), the machine and the notes
// of both; and o to measure it with: its URL, the engine's name, version and commit and the
// model where o leaves them open, and no launch command (the record's is the redacted one;
// measureURL knows only the API key).
func servedRun(ctx context.Context, env *Deps, o session, srv *engine.Server, bd *engine.Build, sec *engineSecrets, logPath string, hw engine.Fingerprint, lock *engine.ClockLock) (session, engineRecord) {
	lookup := envLookup(env)
	expanded, _ := o.Engine.Serve.Expanded(func(name string) (string, bool) {
		if name == "PORT" {
			return fmt.Sprint(srv.Port()), true
		}
		return lookup(name)
	})
	sec.add(secretArgValues(srv.Argv())...)
	prov := srv.Provenance(ctx, bd)
	rec := engineRecord{
		prov: prov, build: bd, logPath: logPath,
		launch:   sec.launchCommand(srv.Argv(), expanded.Env),
		hardware: hardwareFromFingerprint(hw, lock),
	}
	for _, n := range hw.Notes {
		rec.notes = append(rec.notes, "hardware: "+n)
	}
	rec.notes = append(rec.notes, sandboxNotes(o)...)
	for _, n := range srv.Notes() {
		rec.notes = append(rec.notes, "server: "+n)
	}
	if lock != nil {
		for _, w := range lock.Warnings {
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
	o.servedArgv = srv.Argv()
	return o, rec
}
