// Package engine turns a commit of an inference engine (vLLM first) into a running server and
// hands the machine back clean: it builds the engine at a commit into a cached environment,
// starts the server with the project's launch command, waits until it is ready, stops it
// without leaving a process behind, and records the machine it ran on.
//
// It must not measure: no request it sends is timed or counted (the readiness checks only ask
// /health and /v1/models), and nothing here knows the speed matrix. Package bench measures the
// server this package starts. It must not run anything through a shell except a build command
// the user wrote as one (build: {command: …}, run by bash -c).
//
// # API
//
//	bd, err := (&engine.Builder{Stderr: os.Stderr}).Build(ctx, engine.BuildSpec{Source: ".", Mode: engine.ModeAuto})
//	srv, err := engine.StartServer(ctx, bd.ServeSpec(engine.ServeSpec{Command: argv, Port: 0}))
//	defer srv.Stop(context.WithoutCancel(ctx))
//	hw := engine.Hardware(ctx)                           // never fails; unknown facts carry notes
//	lock, err := engine.LockClocks(ctx, nil, engine.LockOptions{}) // then lock.Restore(ctx)
//
// # Building
//
// One environment per commit under the cache directory ($XDG_CACHE_HOME/speedmatrix/engines,
// with a trust level CACHE/trusted or CACHE/untrusted: see trust.go and docs/security.md):
// ENGINE-COMMIT/ holds src/ (a local clone checked out at the commit, so that the editable
// install of one commit is never changed by checking out another), venv/ or the image's tag,
// last-used, and complete.json, written last, with the build's mode, time and duration. A
// commit built before in the same mode is reused without running anything; a build from a
// checkout with uncommitted changes is never reused. After every build the least recently used
// environments beyond Keep are removed (never the one just built or reused), with their images.
// One build runs at a time per cache directory (flock on .lock).
//
// The modes are vLLM's own recipes. auto is precompiled when the diff from the merge-base
// with origin/main (or main) touches no compiled source (csrc/, cmake/, CMakeLists.txt,
// setup.py, *.cu, *.cuh, *.cpp, *.h, *.hpp, requirements/build*, pyproject.toml's
// [build-system]), else full. precompiled: uv venv --python 3.12 --seed, then
// VLLM_USE_PRECOMPILED=1 VLLM_PRECOMPILED_WHEEL_COMMIT=<merge-base> uv pip install --editable .
// (the compiled kernels of that main commit). full: the same install compiling, with MAX_JOBS
// (the CPU count), TORCH_CUDA_ARCH_LIST (9.0, Hopper) and ccache through
// CMAKE_{C,CXX,CUDA}_COMPILER_LAUNCHER and CCACHE_DIR (CACHE/ccache, shared by the commits of one trust level).
// docker: docker build --file docker/Dockerfile --target vllm-openai --tag
// speedmatrix-vllm:<commit>, served by docker run --gpus all --ipc=host -p PORT:PORT with the
// environment passed by name (-e NAME, so no secret lands in an argv) and the container removed
// after the stop. The output of every build goes to a log file, and in GitHub Actions also to
// stderr inside ::group::build vllm <commit>; a failure reports the exit code and the last 30
// log lines.
//
// # Serving
//
// The server runs without a shell in its own process group (vLLM starts engine core and worker
// processes), led by a reaper (Reap) that kills the whole group when this process dies, with an
// allow-listed environment (ProcessEnv); its output is redacted line by line into a log file
// kept for the artifacts, and kept raw (mode 0600) outside them. Port
// 0 picks a free port; ${PORT} in the command, its environment and AfterStop becomes it. Ready
// means GET /health answers 200 and GET /v1/models lists the model; the process exiting first
// is an early failure carrying the last log lines (a CUDA out-of-memory, a bad flag), and
// ReadyTimeout stops the group. Stop is SIGTERM to the group, SIGKILL after StopGrace, then a
// wait until no process of the group is left. Before the start, nvidia-smi must list no other
// compute process (a measurement beside one is not worth keeping); after the stop, Stop waits
// (bounded) until the server's GPU processes are gone and memory.used is back near its level
// before the start, so the next server finds the GPU free. Without nvidia-smi both checks are
// skipped with a note.
//
// With a Sandbox (ServeSpec.Sandbox, BuildSpec.Sandbox; sandbox.go), the reaper is also the
// init of new user, PID, mount and IPC namespaces: the engine sees a read-only system, a private
// HOME and /tmp, the GPUs, and only its checkout and build directory writable, and nothing it
// starts outlives the reaper. Build.ServeSpec runs the server in the checkout of the commit it
// serves.
//
// # Hardware and clocks
//
// Hardware reads nvidia-smi --query-gpu (name, count, memory, driver, current and maximum SM
// and memory clocks, power limit, persistence mode; "[N/A]" and "[Not Supported]" become
// unknown), the driver's CUDA version from nvidia-smi's header, the CPU model from
// /proc/cpuinfo, the OS from /etc/os-release and uname, and the compute processes running.
// LockClocks runs nvidia-smi -pm 1, -lgc and -lmc at the maximum clocks (or given ones) per GPU
// and Restore undoes exactly what was changed (-rmc, -rgc, the previous persistence mode); a
// refusal (exit code 4, "Insufficient Permissions") is ErrNotPermitted with what to do.
package engine
