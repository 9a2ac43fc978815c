// Package engine is `speedmatrix engine build` and `engine serve`: their flags (or --config's
// engine section), then package engine.
package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/measure"
)

// engineFlags are the build flags shared by engine build and engine serve.
type engineFlags struct {
	source, mode, command, cacheDir, logDir string
	keep                                    int
}

func (f *engineFlags) register(cmd *cobra.Command, defaultMode string) {
	fl := cmd.Flags()
	fl.StringVar(&f.source, "source", ".", "the engine's git checkout")
	fl.StringVar(&f.mode, "build", defaultMode, "build mode: auto, precompiled, full, docker or none")
	fl.StringVar(&f.command, "build-command", "", "build with this command instead (run by bash -c in the commit's checkout)")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "directory of the built environments, one per commit (default $XDG_CACHE_HOME/speedmatrix/engines)")
	fl.IntVar(&f.keep, "keep", 3, "how many built environments to keep (least recently used pruned)")
	fl.StringVar(&f.logDir, "log-dir", "", "directory for the build and server logs (default: the cache's logs/ and a temporary file)")
}

// spec turns the flags into a build spec.
func (f *engineFlags) spec() (engine.BuildSpec, error) {
	mode, err := engine.ParseMode(f.mode)
	if err != nil {
		return engine.BuildSpec{}, cmdutil.Usagef("--build: %v", err)
	}
	if f.command != "" {
		mode = engine.ModeCommand
	}
	if f.keep < 1 {
		return engine.BuildSpec{}, cmdutil.Usagef("--keep %d: want at least 1", f.keep)
	}
	return engine.BuildSpec{Source: f.source, Mode: mode, Command: f.command, CacheDir: f.cacheDir,
		Keep: f.keep, LogDir: f.logDir}, nil
}

func (f *engineFlags) build(ctx context.Context, env *cmdutil.Env) (*engine.Build, error) {
	spec, err := f.spec()
	if err != nil {
		return nil, err
	}
	b := &engine.Builder{Getenv: env.Getenv, Stderr: env.Stderr, Log: env.Log, Reaper: measure.EngineReaper()}
	return b.Build(ctx, spec)
}

// NewCmd builds `speedmatrix engine` and its subcommands.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "engine",
		Short: "Build the inference engine at a commit, and serve it",
		Long: `engine builds the inference engine (vLLM) at the checked-out commit into a cached
environment, and serves it with a launch command, stopping it cleanly. The package doc of
engine describes the build modes, the cache and the process handling.`,
	}
	cmd.AddCommand(newEngineBuildCmd(env), newEngineServeCmd(env))
	return cmd
}

// newEngineBuildCmd builds `speedmatrix engine build`.
func newEngineBuildCmd(env *cmdutil.Env) *cobra.Command {
	var f engineFlags
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build the engine at the checkout's commit (reused when built before)",
		Long: `build builds the engine of --source at its HEAD commit, once per commit: a commit built
before is reused. auto picks precompiled (VLLM_USE_PRECOMPILED=1 uv pip install --editable .,
the kernels of the merge-base with main) unless the change touches compiled sources, then
full (compiling, MAX_JOBS, TORCH_CUDA_ARCH_LIST=9.0, ccache). docker builds docker/Dockerfile's
vllm-openai target. It prints the environment built, as "key: value" lines.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bd, err := f.build(cmd.Context(), env)
			if err != nil {
				return err
			}
			bd.WriteText(env.Stdout)
			return nil
		},
	}
	f.register(cmd, string(engine.ModeAuto))
	return cmd
}

// newEngineServeCmd builds `speedmatrix engine serve`.
func newEngineServeCmd(env *cmdutil.Env) *cobra.Command {
	var (
		f                       engineFlags
		port                    int
		readyTimeout, stopGrace time.Duration
		model, configPath       string
		envs                    []string
	)
	cmd := &cobra.Command{
		Use:   "serve [flags] [--config speedmatrix.yaml | -- COMMAND [ARG...]]",
		Short: "Start the engine's server, print its URL when ready, stop it on Ctrl-C",
		Long: `serve starts the launch command (no shell; ${PORT} and ${NAME} from the environment
are replaced) in its own process group, waits until GET /health answers and GET /v1/models
lists the model, prints the URL on stdout, and runs until Ctrl-C, which stops the whole group
(SIGTERM, SIGKILL after --stop-grace). The GPUs must be free of other compute processes first
(nvidia-smi), and after the stop it waits for their memory to be released. --build (none by
default) builds the engine at the commit first and serves from that environment.

--config speedmatrix.yaml serves what run would serve: engine.serve's command, env, port,
ready_timeout and stop_grace, the engine's source, build, cache_dir and keep, and the model;
flags given on the command line win, and a command after -- replaces engine.serve.command.`,
		Example: `  speedmatrix engine serve --port 0 -- vllm serve Qwen/Qwen3-0.6B --port '${PORT}'
  speedmatrix engine serve -- speedmatrix sim --listen '127.0.0.1:${PORT}'
  speedmatrix engine serve --config speedmatrix.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			extra := map[string]string{}
			if configPath != "" {
				c, err := config.Load(configPath)
				if err != nil {
					return cmdutil.Usagef("--config: %v", err)
				}
				if args, err = serveFromConfig(cmd, c, &f, &port, &readyTimeout, &stopGrace, &model, extra, args); err != nil {
					return err
				}
			}
			if len(args) == 0 || (configPath == "" && cmd.ArgsLenAtDash() != 0) {
				return cmdutil.Usagef("serve: give the server's command after --, e.g. speedmatrix engine serve -- vllm serve MODEL --port '${PORT}', or --config speedmatrix.yaml with engine.serve")
			}
			for _, kv := range envs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return cmdutil.Usagef("--env %q: want NAME=VALUE", kv)
				}
				extra[k] = v
			}
			if port < 0 || port > 65535 {
				return cmdutil.Usagef("--port %d: want 0 (a free port) to 65535", port)
			}
			ctx := cmd.Context()
			bd, err := f.build(ctx, env)
			if err != nil {
				return err
			}
			spec := engine.ServeSpec{
				Command: args, Env: extra, Port: port, Model: model,
				ReadyTimeout: readyTimeout, StopGrace: stopGrace, Log: env.Log, Reaper: measure.EngineReaper(),
				Expand: func(name string) (string, bool) { v := env.Getenv(name); return v, v != "" },
			}
			if f.logDir != "" {
				spec.LogPath = filepath.Join(f.logDir, "server.log")
			}
			srv, err := engine.StartServer(ctx, bd.ServeSpec(spec))
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, srv.URL())
			env.Log.Info("serving; Ctrl-C stops the server", "model", srv.Model(), "log", srv.LogPath())
			var serr error
			select {
			case <-ctx.Done():
				env.Log.Info("stopping the server")
				serr = srv.Stop(context.WithoutCancel(ctx))
			case <-srv.Exited():
				serr = errors.Join(srv.Err(), srv.Stop(context.WithoutCancel(ctx)))
			}
			srv.KeepOrRemoveLogs(env.Log, f.logDir != "", serr)
			return serr
		},
	}
	f.register(cmd, string(engine.ModeNone))
	fl := cmd.Flags()
	fl.IntVar(&port, "port", 0, "port of the server; 0 picks a free one (the command's ${PORT})")
	serveDefaults := config.DefaultServe() // as engine.serve's ready_timeout and stop_grace
	fl.DurationVar(&readyTimeout, "ready-timeout", serveDefaults.ReadyTimeout, "how long the model may take to load")
	fl.DurationVar(&stopGrace, "stop-grace", serveDefaults.StopGrace, "time between SIGTERM and SIGKILL at the stop")
	fl.StringVar(&model, "model", "", "the model /v1/models must list (default: the one the command names)")
	fl.StringArrayVar(&envs, "env", nil, "NAME=VALUE added to the server's environment (repeatable)")
	fl.StringVar(&configPath, "config", "", "speedmatrix.yaml: serve its engine.serve, built as its engine section says (flags given here win)")
	return cmd
}

// serveFromConfig fills what engine serve's flags left unset from the configuration c: the
// build (engine.source, build, cache_dir, keep), engine.serve's port, ready_timeout, stop_grace
// and env (into extra; --env adds to them) and the served model. It returns the command to
// serve: args when given after --, else engine.serve.command; a file without engine.serve and
// no command is a usage error.
func serveFromConfig(cmd *cobra.Command, c config.Config, f *engineFlags, port *int, readyTimeout, stopGrace *time.Duration, model *string, extra map[string]string, args []string) ([]string, error) {
	set := func(name string) bool { return !cmd.Flags().Changed(name) }
	e := c.Engine
	if set("source") && e.Source != "" {
		f.source = e.Source
	}
	if set("build") && set("build-command") {
		if e.Build.Mode == config.BuildCommand {
			f.command = e.Build.Command
		} else {
			f.mode = e.BuildMode()
		}
	}
	if set("cache-dir") && e.CacheDir != "" {
		f.cacheDir = e.CacheDir
	}
	if set("keep") && e.Keep > 0 {
		f.keep = e.Keep
	}
	if set("model") && c.Model != "" {
		*model = c.Model
	}
	if e.Serve == nil {
		if len(args) == 0 {
			return nil, cmdutil.Usagef("--config: the file has no engine.serve to serve; add engine.serve.command, or give the server's command after --")
		}
		return args, nil
	}
	if set("port") {
		*port = e.Serve.Port
	}
	if set("ready-timeout") && e.Serve.ReadyTimeout > 0 {
		*readyTimeout = time.Duration(e.Serve.ReadyTimeout)
	}
	if set("stop-grace") && e.Serve.StopGrace > 0 {
		*stopGrace = time.Duration(e.Serve.StopGrace)
	}
	maps.Copy(extra, e.Serve.Env)
	if len(args) == 0 {
		args = e.Serve.Command
	}
	return args, nil
}
