package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/engine"
)

// gitRepo is a real git repository made for a test: main holds a small vLLM-like tree.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *gitRepo {
	t.Helper()
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "--quiet", "--initial-branch=main")
	r.write("vllm/engine.py", "print('engine')\n")
	r.write("csrc/attention.cu", "__global__ void k() {}\n")
	r.write("pyproject.toml", "[build-system]\nrequires = [\"torch==2.8.0\"]\n\n[tool.ruff]\nline-length = 80\n")
	r.write("docker/Dockerfile", "FROM scratch AS vllm-openai\n")
	r.commit("main: initial")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *gitRepo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *gitRepo) commit(msg string) string {
	r.git("add", "-A")
	r.git("commit", "--quiet", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// branch starts a PR branch off main with files changed.
func (r *gitRepo) branch(name string, files map[string]string) string {
	r.git("checkout", "--quiet", "-b", name, "main")
	for p, c := range files {
		r.write(p, c)
	}
	return r.commit(name)
}

// fakeBuildTools puts the fake uv and docker first on PATH and returns the file recording
// their calls.
func fakeBuildTools(t *testing.T) (log string) {
	t.Helper()
	bin, err := filepath.Abs("testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(t.TempDir(), "calls.log")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_LOG", log)
	t.Setenv("FAKE_DOCKER_STATE", t.TempDir())
	t.Setenv("FAKE_BUILD_FAIL", "")
	t.Setenv("GITHUB_ACTIONS", "")
	return log
}

// fakeToolsEnv passes the fake tools' settings to the build commands, whose environment is
// allow-listed: they reach a build only as configured variables.
func fakeToolsEnv() map[string]string {
	return map[string]string{"FAKE_LOG": os.Getenv("FAKE_LOG"), "FAKE_DOCKER_STATE": os.Getenv("FAKE_DOCKER_STATE"), "FAKE_BUILD_FAIL": os.Getenv("FAKE_BUILD_FAIL")}
}

func readCalls(t *testing.T, log string) string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

func TestBuildAutoPrecompiled(t *testing.T) {
	log := fakeBuildTools(t)
	r := newRepo(t)
	base := r.git("rev-parse", "main")
	head := r.branch("python-only", map[string]string{"vllm/engine.py": "print('faster')\n", "pyproject.toml": "[build-system]\nrequires = [\"torch==2.8.0\"]\n\n[tool.ruff]\nline-length = 100\n"})
	cache := t.TempDir()
	bd, err := (&engine.Builder{}).Build(context.Background(), engine.BuildSpec{Env: fakeToolsEnv(), Source: r.dir, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if bd.Mode != engine.ModePrecompiled || bd.Commit != head || bd.MergeBase != base || bd.Cached {
		t.Errorf("build %+v, want precompiled of %s on %s, not cached", bd, head, base)
	}
	calls := readCalls(t, log)
	venv := filepath.Join(cache, "vllm-"+head, "venv")
	for _, want := range []string{
		"uv venv --python 3.12 --seed " + venv,
		"uv pip install --python " + venv + "/bin/python --editable . --torch-backend=auto",
		"cwd=" + filepath.Join(cache, "vllm-"+head, "src") + " VIRTUAL_ENV=" + venv + " VLLM_USE_PRECOMPILED=1 VLLM_PRECOMPILED_WHEEL_COMMIT=" + base,
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls\n%s\nwant %q", calls, want)
		}
	}
	// The build is of the commit, in a private checkout.
	if data, err := os.ReadFile(filepath.Join(bd.Source, "vllm/engine.py")); err != nil || string(data) != "print('faster')\n" {
		t.Errorf("checkout holds %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(bd.Dir, "complete.json")); err != nil {
		t.Errorf("no completion marker: %v", err)
	}
}

func TestBuildAutoFullWhenKernelChanged(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"kernel":       {"csrc/attention.cu": "__global__ void k2() {}\n"},
		"build-system": {"pyproject.toml": "[build-system]\nrequires = [\"torch==2.9.0\"]\n\n[tool.ruff]\nline-length = 80\n"},
	} {
		t.Run(name, func(t *testing.T) {
			log := fakeBuildTools(t)
			r := newRepo(t)
			r.branch("pr", files)
			cache := t.TempDir()
			bd, err := (&engine.Builder{}).Build(context.Background(), engine.BuildSpec{Env: fakeToolsEnv(), Source: r.dir, CacheDir: cache, MaxJobs: 7})
			if err != nil {
				t.Fatal(err)
			}
			if bd.Mode != engine.ModeFull {
				t.Errorf("mode %s (%s), want full", bd.Mode, bd.Reason)
			}
			calls := readCalls(t, log)
			want := "VLLM_USE_PRECOMPILED= VLLM_PRECOMPILED_WHEEL_COMMIT= MAX_JOBS=7 TORCH_CUDA_ARCH_LIST=9.0 CCACHE_DIR=" + filepath.Join(cache, "ccache") + " CMAKE_CXX_COMPILER_LAUNCHER=ccache"
			if !strings.Contains(calls, want) {
				t.Errorf("calls\n%s\nwant %q", calls, want)
			}
		})
	}
}

// TestBuildCachedReused: the second build of a commit runs nothing.
func TestBuildCachedReused(t *testing.T) {
	log := fakeBuildTools(t)
	r := newRepo(t)
	r.branch("pr", map[string]string{"vllm/engine.py": "x\n"})
	spec := engine.BuildSpec{Env: fakeToolsEnv(), Source: r.dir, CacheDir: t.TempDir()}
	first, err := (&engine.Builder{}).Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(readCalls(t, log), "uv pip install")
	second, err := (&engine.Builder{}).Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(readCalls(t, log), "uv pip install"); n != 1 || got != 1 {
		t.Errorf("uv pip install ran %d then %d times, want 1 and 1 (reused)", n, got)
	}
	if !second.Cached || second.Venv != first.Venv || second.Mode != first.Mode || !second.BuiltAt.Equal(first.BuiltAt) {
		t.Errorf("second build %+v, want the first's environment, cached", second)
	}
}

// TestBuildFailure: the error holds the exit code and the last lines, and the failed build is
// not reused.
func TestBuildFailure(t *testing.T) {
	log := fakeBuildTools(t)
	t.Setenv("FAKE_BUILD_FAIL", "1")
	r := newRepo(t)
	spec := engine.BuildSpec{Env: fakeToolsEnv(), Source: r.dir, CacheDir: t.TempDir(), Mode: engine.ModeFull}
	_, err := (&engine.Builder{}).Build(context.Background(), spec)
	var pe *engine.ProcessError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *ProcessError", err)
	}
	if pe.ExitCode != 2 || len(pe.Tail) != engine.TailLines {
		t.Errorf("exit code %d, %d tail lines; want 2 and %d", pe.ExitCode, len(pe.Tail), engine.TailLines)
	}
	msg := err.Error()
	for _, want := range []string{"exit code 2", "Unsupported gpu architecture", "building line 60", pe.Log} {
		if !strings.Contains(msg, want) {
			t.Errorf("error\n%s\ndoes not hold %q", msg, want)
		}
	}
	if strings.Contains(msg, "building line 20\n") {
		t.Errorf("error holds more than the last lines:\n%s", msg)
	}
	t.Setenv("FAKE_BUILD_FAIL", "")
	spec.Env = fakeToolsEnv()
	if _, err := (&engine.Builder{}).Build(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(readCalls(t, log), "uv pip install"); got != 2 {
		t.Errorf("uv pip install ran %d times, want 2 (a failed build is not reused)", got)
	}
}

func TestBuildDocker(t *testing.T) {
	log := fakeBuildTools(t)
	r := newRepo(t)
	head := r.git("rev-parse", "HEAD")
	spec := engine.BuildSpec{Env: fakeToolsEnv(), Source: r.dir, CacheDir: t.TempDir(), Mode: engine.ModeDocker, MaxJobs: 4}
	bd, err := (&engine.Builder{}).Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if bd.Image != "speedmatrix-vllm:"+head {
		t.Errorf("image %q", bd.Image)
	}
	want := "docker build --file docker/Dockerfile --target vllm-openai --tag speedmatrix-vllm:" + head + " --build-arg max_jobs=4 --build-arg torch_cuda_arch_list=9.0 ."
	if calls := readCalls(t, log); !strings.Contains(calls, want) {
		t.Errorf("calls\n%s\nwant %q", calls, want)
	}
	if _, err := (&engine.Builder{}).Build(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(readCalls(t, log), "docker build"); got != 1 {
		t.Errorf("docker build ran %d times, want 1", got)
	}
	ss := bd.ServeSpec(engine.ServeSpec{Command: []string{"vllm", "serve", "org/model", "--port", "${PORT}"},
		Env: map[string]string{"VLLM_API_KEY": "secret"}})
	got := strings.Join(ss.Command, " ")
	for _, w := range []string{"docker run --rm --name speedmatrix-vllm-" + head[:12] + "-${PORT} --gpus all --ipc=host -p 127.0.0.1:${PORT}:${PORT}",
		"-e VLLM_API_KEY speedmatrix-vllm:" + head + " org/model --port ${PORT}"} {
		if !strings.Contains(got, w) {
			t.Errorf("docker serve command %q, want %q", got, w)
		}
	}
	if strings.Contains(got, "secret") || ss.Model != "org/model" || len(ss.AfterStop) == 0 {
		t.Errorf("serve spec %+v", ss)
	}
}

// TestBuildCommand: a custom command runs through bash -c in the commit's checkout, once.
func TestBuildCommand(t *testing.T) {
	fakeBuildTools(t)
	r := newRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	spec := engine.BuildSpec{Env: fakeToolsEnv(), Source: r.dir, CacheDir: t.TempDir(), Mode: engine.ModeCommand,
		Command: `echo "$PWD $SPEEDMATRIX_COMMIT" >> ` + marker + ` && test -f docker/Dockerfile`}
	for range 2 {
		if _, err := (&engine.Builder{}).Build(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(marker)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 || !strings.HasSuffix(lines[0], "/src "+r.git("rev-parse", "HEAD")) {
		t.Errorf("command ran %q, want once in the checkout", lines)
	}
}

// TestBuildKeepPrunesLeastRecentlyUsed: with keep 2, building a third commit removes the least
// recently used one, never the one in use.
func TestBuildKeepPrunesLeastRecentlyUsed(t *testing.T) {
	fakeBuildTools(t)
	r := newRepo(t)
	cache := t.TempDir()
	b := &engine.Builder{}
	build := func(commit string) *engine.Build {
		t.Helper()
		bd, err := b.Build(context.Background(), engine.BuildSpec{Env: fakeToolsEnv(), Source: r.dir, Commit: commit, CacheDir: cache, Keep: 2})
		if err != nil {
			t.Fatal(err)
		}
		return bd
	}
	c1 := r.branch("a", map[string]string{"vllm/a.py": "a\n"})
	c2 := r.branch("b", map[string]string{"vllm/b.py": "b\n"})
	c3 := r.branch("c", map[string]string{"vllm/c.py": "c\n"})
	build(c1)
	build(c2)
	build(c1) // c1 is now more recently used than c2
	build(c3)
	for c, want := range map[string]bool{c1: true, c2: false, c3: true} {
		_, err := os.Stat(filepath.Join(cache, "vllm-"+c))
		if got := err == nil; got != want {
			t.Errorf("environment of %s kept %v, want %v", c[:7], got, want)
		}
	}
}

// TestBuildActionsLogGroup: in GitHub Actions the output is streamed inside a log group.
func TestBuildActionsLogGroup(t *testing.T) {
	fakeBuildTools(t)
	t.Setenv("GITHUB_ACTIONS", "true")
	r := newRepo(t)
	var stderr bytes.Buffer
	bd, err := (&engine.Builder{Stderr: &stderr}).Build(context.Background(), engine.BuildSpec{Env: fakeToolsEnv(), Source: r.dir, CacheDir: t.TempDir(), Mode: engine.ModeFull})
	if err != nil {
		t.Fatal(err)
	}
	out := stderr.String()
	if !strings.HasPrefix(out, "::group::build vllm "+bd.Commit[:12]+"\n") || !strings.HasSuffix(out, "::endgroup::\n") || !strings.Contains(out, "Installed 150 packages") {
		t.Errorf("stderr:\n%s", out)
	}
	logData, _ := os.ReadFile(bd.LogPath)
	if !strings.Contains(string(logData), "Installed 150 packages") {
		t.Errorf("log %s:\n%s", bd.LogPath, logData)
	}
}

func TestBuildNone(t *testing.T) {
	log := fakeBuildTools(t)
	bd, err := (&engine.Builder{}).Build(context.Background(), engine.BuildSpec{Env: fakeToolsEnv(), Mode: engine.ModeNone})
	if err != nil || bd.Mode != engine.ModeNone {
		t.Fatalf("%+v, %v", bd, err)
	}
	if calls := readCalls(t, log); calls != "" {
		t.Errorf("mode none ran %q", calls)
	}
}
