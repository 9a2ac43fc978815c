package engine

import "testing"

func TestNeedsFullBuild(t *testing.T) {
	tests := []struct {
		name    string
		changed []string
		bs      bool
		want    string
	}{
		{"python only", []string{"vllm/v1/engine/core.py", "tests/test_x.py", "docs/a.md"}, false, ""},
		{"nothing", nil, false, ""},
		{"a kernel", []string{"vllm/a.py", "csrc/attention/attention_kernels.cu"}, false, "csrc/attention/attention_kernels.cu"},
		{"a header outside csrc", []string{"vllm/third_party/x.h"}, false, "vllm/third_party/x.h"},
		{"cuh", []string{"kernels/a.cuh"}, false, "kernels/a.cuh"},
		{"hpp", []string{"x/a.hpp"}, false, "x/a.hpp"},
		{"cpp", []string{"x/a.cpp"}, false, "x/a.cpp"},
		{"CMakeLists", []string{"CMakeLists.txt"}, false, "CMakeLists.txt"},
		{"cmake dir", []string{"cmake/utils.cmake"}, false, "cmake/utils.cmake"},
		{"setup.py", []string{"setup.py"}, false, "setup.py"},
		{"build requirements", []string{"requirements/build.txt"}, false, "requirements/build.txt"},
		{"build requirements, newer layout", []string{"requirements/build/cuda.txt"}, false, "requirements/build/cuda.txt"},
		{"runtime requirements", []string{"requirements/common.txt"}, false, ""},
		{"pyproject build-system", []string{"pyproject.toml"}, true, "pyproject.toml [build-system]"},
		{"pyproject elsewhere", []string{"pyproject.toml"}, false, ""},
		{"a python file named like a header", []string{"vllm/header.py"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NeedsFullBuild(tt.changed, tt.bs); got != tt.want {
				t.Errorf("NeedsFullBuild(%q, %v) = %q, want %q", tt.changed, tt.bs, got, tt.want)
			}
		})
	}
}

func TestTomlTable(t *testing.T) {
	a := "[build-system]\nrequires = [\"cmake>=3.26\", \"torch==2.8.0\"]  # pinned\nbuild-backend = \"setuptools.build_meta\"\n\n[tool.ruff]\nline-length = 80\n"
	b := "[build-system]\nrequires = [\"cmake>=3.26\", \"torch==2.8.0\"]\n\nbuild-backend = \"setuptools.build_meta\"\n[tool.ruff]\nline-length = 100\n"
	c := "[build-system]\nrequires = [\"cmake>=3.26\", \"torch==2.9.0\"]\nbuild-backend = \"setuptools.build_meta\"\n"
	if tomlTable([]byte(a), "build-system") != tomlTable([]byte(b), "build-system") {
		t.Error("a change outside [build-system] (and of comments, blank lines) counted as a build-system change")
	}
	if tomlTable([]byte(a), "build-system") == tomlTable([]byte(c), "build-system") {
		t.Error("a changed build requirement not seen")
	}
}
