package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/engine"
)

// TestServeEnvDroppedHint: a launch script that reads a variable of the caller's environment,
// which the allow-list does not pass, exits during load; the error says the environment is
// allow-listed, names the variable the script reads and engine.serve.env, and shows the log's
// last line with something on it (the script's error, not the blank lines after it). Before,
// the error said only "exited during load" and the action's last log line was empty.
func TestServeEnvDroppedHint(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "serve.sh")
	body := "#!/bin/sh\n\"$MY_ENGINE_HOME/bin/engine-serve\" \"$@\"\ncode=$?\nprintf '\\n  \\n\\n' >&2\nexit $code\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		base      []string
		env       map[string]string
		want      []string
		wantNotIn []string
	}{
		{name: "the variable the script reads", base: []string{"PATH=" + os.Getenv("PATH"), "MY_ENGINE_HOME=/opt/engine", "UNRELATED=1", "GITHUB_TOKEN=x"},
			want: []string{"exited during load", "exit code", "environment is allow-listed", "reads MY_ENGINE_HOME, not passed", "engine.serve.env", "/bin/engine-serve: not found"}, wantNotIn: []string{"UNRELATED", "GITHUB_TOKEN"}},
		{name: "the script reads none of them", base: []string{"PATH=" + os.Getenv("PATH"), "OTHER_VAR=1", "GITHUB_TOKEN=x"},
			want: []string{"environment is allow-listed", "OTHER_VAR of the caller's variables were not passed", "engine.serve.env"}, wantNotIn: []string{"GITHUB_TOKEN"}},
		// engine.serve.env gives the server MY_ENGINE_HOME: the hint must not say it was not
		// passed (before, it did, and sent the user to add what was already there).
		{name: "the variable engine.serve.env passes", base: []string{"PATH=" + os.Getenv("PATH"), "MY_ENGINE_HOME=/opt/engine", "GITHUB_TOKEN=x"},
			env:  map[string]string{"MY_ENGINE_HOME": "${MY_ENGINE_HOME}"},
			want: []string{"exited during load", "environment is allow-listed", "no variable of the caller's was dropped"}, wantNotIn: []string{"MY_ENGINE_HOME", "GITHUB_TOKEN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.StartServer(context.Background(), engine.ServeSpec{
				Command: []string{script}, Env: tc.env, BaseEnv: tc.base, LogPath: filepath.Join(t.TempDir(), "server.log"),
				ReadyTimeout: 20 * time.Second, Poll: 50 * time.Millisecond, GPU: testGPU(t),
			})
			var pe *engine.ProcessError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ProcessError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			for _, w := range tc.wantNotIn {
				if strings.Contains(pe.Hint, w) {
					t.Errorf("hint names %s: %q", w, pe.Hint)
				}
			}
			if n := len(pe.Tail); n == 0 || strings.TrimSpace(pe.Tail[n-1]) == "" {
				t.Errorf("the log's last line is empty: %q", pe.Tail)
			}
		})
	}
}

// TestEnvHintLimit: a long list of dropped variables is cut at 12 names and says how many more.
func TestEnvHintLimit(t *testing.T) {
	var base []string
	for _, c := range "ABCDEFGHIJKLMNOP" {
		base = append(base, "VAR_"+string(c)+"=1")
	}
	h := engine.EnvHint(base, nil, "")
	if !strings.Contains(h, "VAR_A, ") || !strings.Contains(h, "and 4 more") || strings.Contains(h, "VAR_P") {
		t.Errorf("hint %q: want 12 names and 4 more", h)
	}
}
