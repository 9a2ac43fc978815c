package engine

import (
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
