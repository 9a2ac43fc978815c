package engine

import (
	"path"
	"strings"
)

// compiledPrefixes and compiledSuffixes name the vLLM sources whose change needs the kernels
// compiled again: the precompiled wheel of the merge-base would not match them.
var (
	compiledPrefixes = []string{"csrc/", "cmake/", "requirements/build"}
	compiledFiles    = []string{"CMakeLists.txt", "setup.py", "requirements-build.txt"}
	compiledSuffixes = []string{".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp", ".cmake"}
)

// compiledSource reports whether a change of file (a repository path) needs a full build.
func compiledSource(file string) bool {
	for _, p := range compiledPrefixes {
		if strings.HasPrefix(file, p) {
			return true
		}
	}
	base := path.Base(file)
	for _, f := range compiledFiles {
		if file == f || (f == "CMakeLists.txt" && base == f) {
			return true
		}
	}
	for _, s := range compiledSuffixes {
		if strings.HasSuffix(file, s) {
			return true
		}
	}
	return false
}

// NeedsFullBuild decides the auto build mode: it returns the first changed file that the
// precompiled kernels cannot cover, or "" when the precompiled path is safe. buildSystem
// reports whether pyproject.toml's [build-system] table changed.
func NeedsFullBuild(changed []string, buildSystemChanged bool) (reason string) {
	for _, f := range changed {
		if compiledSource(f) {
			return f
		}
	}
	if buildSystemChanged {
		return "pyproject.toml [build-system]"
	}
	return ""
}

// tomlTable returns the lines of table name (e.g. "build-system") of a TOML file, without
// comments and blank lines, so that two versions can be compared.
func tomlTable(data []byte, name string) string {
	var out []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if i := strings.Index(t, "#"); i >= 0 {
			t = strings.TrimSpace(t[:i])
		}
		if strings.HasPrefix(t, "[") {
			h := strings.Trim(t, "[] ")
			in = h == name || strings.HasPrefix(h, name+".")
			if in {
				out = append(out, t)
			}
			continue
		}
		if in && t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}
