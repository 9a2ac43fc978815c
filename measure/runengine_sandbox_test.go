package measure

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/engine"
)

// TestPrepareEngineRunTrust: an untrusted served run marks the runner's tool directory; a
// trusted one there is then refused before anything is built, unless the runner says it is
// ephemeral; engine.sandbox: none passes without a sandbox and its note is recorded.
func TestPrepareEngineRunTrust(t *testing.T) {
	tools := t.TempDir()
	vars := map[string]string{"RUNNER_TOOL_CACHE": tools}
	env := &Deps{Stderr: io.Discard, Getenv: func(k string) string { return vars[k] }, Log: slog.New(slog.DiscardHandler)}
	o := defaultSession()
	o.Engine.Sandbox = "none"
	o.Engine.Trust = string(engine.TrustTrusted)
	if sb, err := prepareEngineRun(context.Background(), env, o); err != nil || sb != nil {
		t.Fatalf("a trusted run on a fresh runner = %v, %v; want no sandbox (none) and no error", sb, err)
	}
	o.Engine.Trust = string(engine.TrustUntrusted)
	if _, err := prepareEngineRun(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tools, engine.UntrustedMarker)); err != nil {
		t.Fatalf("the untrusted run left no marker: %v", err)
	}
	o.Engine.Trust = string(engine.TrustTrusted)
	if _, err := prepareEngineRun(context.Background(), env, o); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a trusted run after an untrusted one on a persistent runner = %v, want refused", err)
	}
	vars[engine.EphemeralVar] = "true"
	if _, err := prepareEngineRun(context.Background(), env, o); err != nil {
		t.Errorf("on a runner that says it is ephemeral: %v", err)
	}
	if n := sandboxNotes(o); len(n) != 1 || !strings.Contains(n[0], "unconfined") {
		t.Errorf("the notes of engine.sandbox: none = %q", n)
	}
}

// TestCheckOutputOutsideEngineNoSource: with build none and no engine.source the server runs
// in the current directory; when its command runs a file there (./serve.sh), results written
// there are refused with what to do (the sandbox hides the results' folder, so the server
// could not start: before, it failed with "chdir …: no such file or directory"). A command
// that names no file of it (speedmatrix sim …, commands.md's example) may write them there.
func TestCheckOutputOutsideEngineNoSource(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "serve.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, tc := range []struct {
		name, source, output string
		command              []string
		wantErr              bool
	}{
		{name: "./serve.sh, results in the current directory", output: "r.json", command: []string{"./serve.sh"}, wantErr: true},
		{name: "./serve.sh, results elsewhere", output: filepath.Join(t.TempDir(), "r.json"), command: []string{"./serve.sh"}},
		{name: "an installed program, results here", output: "r.json", command: []string{"speedmatrix", "sim", "--listen", "127.0.0.1:${PORT}"}},
		{name: "engine.source elsewhere", source: t.TempDir(), output: "r.json", command: []string{"./serve.sh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o session
			o.Output = tc.output
			o.Engine.Source = tc.source
			o.Engine.Serve = &config.Serve{Command: tc.command}
			err := checkOutputOutsideEngine(o, o.Engine.Source)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "write the results elsewhere") {
				t.Errorf("the error does not say what to do: %v", err)
			}
		})
	}
}

// TestCheckEnginesCanDifferNoSource: run --paired with build none and no engine.source serves
// the head from the current directory; a ./serve.sh there serves each commit's tree, so the
// run is not refused (before, it was: "names no file of the checkout " with an empty path).
func TestCheckEnginesCanDifferNoSource(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "serve.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, tc := range []struct {
		command []string
		wantErr bool
	}{
		{command: []string{"./serve.sh"}},
		{command: []string{"speedmatrix", "sim", "--listen", "127.0.0.1:${PORT}"}, wantErr: true},
	} {
		var o session
		o.Engine.Serve = &config.Serve{Command: tc.command}
		if err := CheckEnginesCanDiffer(o.Settings, engine.ModeNone, ""); (err != nil) != tc.wantErr {
			t.Errorf("%q: err = %v, want an error: %v", tc.command, err, tc.wantErr)
		}
	}
}

// TestEngineSandboxShowsSpeedmatrixOnPath: the speedmatrix the engine's PATH names (a launch
// script's `speedmatrix sim`) is shown read-only at its place even where it lies in a hidden
// directory (the action's binary under RUNNER_TEMP) or the private /tmp; that directory's other
// files are not. Before, a launch script under act failed with "speedmatrix: not found".
func TestEngineSandboxShowsSpeedmatrixOnPath(t *testing.T) {
	temp := t.TempDir()
	bin := filepath.Join(temp, "speedmatrix-bin-0123")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(bin, "speedmatrix")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PATH": "relative/bin:" + bin + ":/usr/bin", "RUNNER_TEMP": temp}
	env := &Deps{Stderr: io.Discard, Getenv: func(k string) string { return vars[k] }, Log: slog.New(slog.DiscardHandler)}
	var o session
	o.Engine.CacheDir = t.TempDir()
	sb := engineSandbox(env, o)
	if !slices.Contains(sb.ReadOnly, exe) {
		t.Errorf("read-only %q, want %s in it", sb.ReadOnly, exe)
	}
	if slices.Contains(sb.ReadOnly, bin) || !slices.Contains(sb.Hidden, temp) {
		t.Errorf("read-only %q, hidden %q: want %s hidden and only its binary shown", sb.ReadOnly, sb.Hidden, temp)
	}
}
