package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunRedactsLaunchCommandInPlace checks the layouts of issue 8 item 5 through
// `speedmatrix run`: a key on the line after `--api-key \`, --env=NAME=…, an Authorization
// header, a quoted key with a space, and the --api-key-env value wherever it appears. The
// recorded command keeps its lines, and no key reaches the results file or the log.
func TestRunRedactsLaunchCommandInPlace(t *testing.T) {
	const apiKey = "sk-live-Apik3yValue"
	launch := strings.Join([]string{
		"#!/bin/bash",
		"export HF_TOKEN=hf_Secr3tTokenValue",
		"vllm serve m \\",
		"  --api-key \\",
		"  " + apiKey + " \\",
		"  --port 8000",
		"docker run --env=VLLM_API_KEY=sk-envVal0123 img",
		`curl -H "Authorization: Bearer sk-bearerVal99" http://x/v1/models`,
		"other --api-key 'sk_E5 x'",
		`echo '{"key": "` + apiKey + `"}'`,
	}, "\n")
	srv := fakeServer(t, benchtest.Config{APIKey: apiKey})
	out := filepath.Join(t.TempDir(), "r.json")
	args := append(smallRun(srv.URL, out), "--api-key-env", "BENCH_KEY", "--launch-command", launch, "--log-level", "debug")
	_, stderr, err := runBench(t, map[string]string{"BENCH_KEY": apiKey}, args...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Run.LaunchCommand
	if n, want := strings.Count(got, "\n"), strings.Count(launch, "\n"); n != want {
		t.Errorf("recorded command has %d newlines, want %d (lines kept):\n%s", n, want, got)
	}
	data, _ := os.ReadFile(out)
	for _, secret := range []string{apiKey, "hf_Secr3tTokenValue", "sk-envVal0123", "sk-bearerVal99", "sk_E5", " x'"} {
		if strings.Contains(got, secret) {
			t.Errorf("recorded command keeps %q:\n%s", secret, got)
		}
		if secret != " x'" && (strings.Contains(string(data), secret) || strings.Contains(stderr, secret)) {
			t.Errorf("%q leaked into the results file or the log", secret)
		}
	}
	for _, keep := range []string{"#!/bin/bash", "vllm serve m \\", "  --port 8000", "--api-key \\"} {
		if !strings.Contains(got, keep) {
			t.Errorf("recorded command lost %q:\n%s", keep, got)
		}
	}
}
