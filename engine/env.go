package engine

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// The environment of build and serve processes is allow-listed: they run the engine's code,
// which on a pull request is the pull request's, so they must not see the job's credentials nor
// reach the runner's command files. What passes is what a build or a server needs of the
// machine: the names in envAllowed and those starting with a prefix of envAllowedPrefixes,
// then the configured variables (engine.serve.env, BuildSpec.Env). A name envDenied refuses
// never passes, configured or not.

// envAllowed returns the names passed as they are.
func envAllowed() []string {
	return []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL", "HOSTNAME", "TERM", "TZ", "LANG", "LANGUAGE",
		"TMPDIR", "TMP", "TEMP", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
		"LD_LIBRARY_PATH", "CC", "CXX", "CUDAHOSTCXX", "NVCC_THREADS", "MAX_JOBS",
		"http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
		"DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_BUILDKIT",
		"OMP_NUM_THREADS", "CI", "RUNNER_TRACKING_ID",
	}
}

// envAllowedPrefixes returns the prefixes of the names passed as they are.
func envAllowedPrefixes() []string {
	return []string{
		"LC_", "CUDA_", "NVIDIA_", "NCCL_", "HF_", "HUGGING_FACE_", "TRANSFORMERS_", "VLLM_", "SGLANG_",
		"TORCH_", "PYTORCH_", "TRITON_", "UV_", "PIP_", "CCACHE_", "CMAKE_",
	}
}

// envDenied reports whether name must never reach an engine's process: GitHub's command files
// (GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY: appending to them
// steers the job's later steps) and everything else of the job's GITHUB_* context (the token
// among it), the action's inputs (INPUT_*, the token in mode full), the runner's ACTIONS_*
// (ACTIONS_RUNTIME_TOKEN, the OIDC request ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN) and
// RUNNER_* but RUNNER_TRACKING_ID (which lets the runner's cleanup find the processes left).
func envDenied(name string) bool {
	if name == "RUNNER_TRACKING_ID" {
		return false
	}
	for _, p := range []string{"GITHUB_", "INPUT_", "ACTIONS_", "RUNNER_"} {
		if strings.HasPrefix(strings.ToUpper(name), p) {
			return true
		}
	}
	return false
}

// envAllowedName reports whether name passes from the inherited environment.
func envAllowedName(name string) bool {
	if envDenied(name) {
		return false
	}
	if slices.Contains(envAllowed(), name) {
		return true
	}
	for _, p := range envAllowedPrefixes() {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ProcessEnv returns the environment of an engine's build or server process: the allow-listed
// variables of inherited (NAME=value entries), then configured ("NAME=value" entries added
// after them, so that they win), without any name envDenied refuses. dropped lists the names
// of configured entries refused, for a warning.
func ProcessEnv(inherited, configured []string) (env []string, dropped []string) {
	for _, kv := range inherited {
		if name, _, ok := strings.Cut(kv, "="); ok && envAllowedName(name) {
			env = append(env, kv)
		}
	}
	for _, kv := range configured {
		name, _, _ := strings.Cut(kv, "=")
		if envDenied(name) {
			dropped = append(dropped, name)
			continue
		}
		env = append(env, kv)
	}
	return env, dropped
}

// maxEnvHintNames bounds how many names EnvHint lists.
const maxEnvHintNames = 12

// scriptVarRE finds the variables a shell script reads: $NAME and ${NAME…}.
var scriptVarRE = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// EnvHint says, for an error of a process that failed early (a server that exited during its
// load), that its environment is allow-listed and which of inherited's variables were not
// passed: those it may be given through engine.serve.env (names envDenied refuses never pass,
// so they are left out, and so are the names of passed, the process's environment, which
// engine.serve.env may have given it), sorted, at most maxEnvHintNames of them. When script is a readable
// text file (the command's launch script), the dropped variables it reads are named first: a
// launch script that reads a variable of the caller's environment fails so, with exit code
// 127 or an empty value.
func EnvHint(inherited, passed []string, script string) string {
	given := map[string]bool{}
	for _, kv := range passed {
		if name, _, ok := strings.Cut(kv, "="); ok {
			given[name] = true
		}
	}
	var names []string
	for _, kv := range inherited {
		name, _, ok := strings.Cut(kv, "=")
		if ok && name != "" && !given[name] && !envAllowedName(name) && !envDenied(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var read []string
	if text := smallTextFile(script); text != "" {
		for _, m := range scriptVarRE.FindAllStringSubmatch(text, -1) {
			if _, found := slices.BinarySearch(names, m[1]); found && !slices.Contains(read, m[1]) {
				read = append(read, m[1])
			}
		}
	}
	h := "its environment is allow-listed (docs/security.md): "
	switch {
	case len(read) > 0:
		h += fmt.Sprintf("%s reads %s, not passed", script, strings.Join(read, ", "))
	case len(names) == 0:
		h += "no variable of the caller's was dropped"
	case len(names) > maxEnvHintNames:
		h += fmt.Sprintf("%s and %d more of the caller's variables were not passed", strings.Join(names[:maxEnvHintNames], ", "), len(names)-maxEnvHintNames)
	default:
		h += strings.Join(names, ", ") + " of the caller's variables were not passed"
	}
	return h + "; give the server what it needs in engine.serve.env"
}

// smallTextFile returns the text of the regular file at path when it is at most 64 KiB and
// holds no NUL byte (a script, not a binary); "" otherwise.
func smallTextFile(path string) string {
	if path == "" {
		return ""
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 64<<10 {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil || bytes.IndexByte(b, 0) >= 0 {
		return ""
	}
	return string(b)
}
