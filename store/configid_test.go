package store_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestConfigID shows what makes results comparable (changes the id) and what does not.
func TestConfigID(t *testing.T) {
	base := store.ConfigID(runFile(t))
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(base) {
		t.Fatalf("ConfigID = %q, want 16 hex digits", base)
	}
	for _, tc := range []struct {
		name    string
		change  func(*results.File)
		changes bool
	}{
		// Same config: what differs between runs meant to be compared.
		{"run id", func(f *results.File) { f.Run.ID = "another-run" }, false},
		{"start and end time", func(f *results.File) { f.Run.Start = f.Run.Start.Add(time.Hour); f.Run.End = f.Run.End.Add(time.Hour) }, false},
		{"engine commit", func(f *results.File) { f.Engine.Commit = "0123456789abcdef0123456789abcdef01234567" }, false},
		{"engine version", func(f *results.File) { f.Engine.Version = "0.12.0" }, false},
		{"trials", func(f *results.File) { f.Run.Settings.Trials = 5 }, false},
		{"seed", func(f *results.File) { f.Run.Settings.Seed = 99 }, false},
		{"server URL", func(f *results.File) { f.Run.Settings.URL = "http://10.0.0.1:8000" }, false},
		{"driver", func(f *results.File) { f.Hardware.Driver = "580.1" }, false},
		{"simulator slowdown (the change under test)", func(f *results.File) { f.Run.Settings.Simulator.Slowdown = "decode=1.1" }, false},
		{"measured numbers", func(f *results.File) { *f.Decode[0].TotalTokPerS *= 2 }, false},
		{"simulator seed, noise, slow-down and fault in its launch command", func(f *results.File) {
			f.Run.LaunchCommand = "speedmatrix sim --profile glm-5.3-flash-nvfp4-h200x2 --speedup 40 --seed 7 --noise=0.3 --slowdown decode=1.1 --fault crash=30s"
		}, false},
		{"the simulator's speed by its new name, --sim-speedup", func(f *results.File) {
			f.Run.LaunchCommand = "speedmatrix sim --profile glm-5.3-flash-nvfp4-h200x2 --sim-speedup 40 --seed 0"
		}, false},
		{"launch command white space", func(f *results.File) {
			f.Run.LaunchCommand = "  speedmatrix   sim --profile\tglm-5.3-flash-nvfp4-h200x2 --speedup 40 --seed 0 "
		}, false},
		{"context labels spelled in tokens, reordered", func(f *results.File) { f.Run.Settings.Contexts = []string{"32768", "8K"} }, false},
		{"concurrency reordered", func(f *results.File) { f.Run.Settings.Concurrency = []int{8, 1} }, false},

		// Another config.
		{"model", func(f *results.File) { f.Run.ServedModel = "other/model" }, true},
		{"model revision", func(f *results.File) { f.Run.Revision = "v2" }, true},
		{"GPU model", func(f *results.File) { f.Hardware.GPU = "H100" }, true},
		{"GPU count", func(f *results.File) { f.Hardware.GPUCount = 4 }, true},
		{"contexts", func(f *results.File) { f.Run.Settings.Contexts = []string{"8K"} }, true},
		{"concurrency", func(f *results.File) { f.Run.Settings.Concurrency = []int{1, 16} }, true},
		{"prefill contexts", func(f *results.File) { f.Run.Settings.PrefillContexts = []string{"16K"} }, true},
		{"an explicit cell list", func(f *results.File) { f.Run.Settings.Cells = []string{"decode/8K/1"} }, true},
		{"duration", func(f *results.File) { f.Run.Settings.DurationSeconds = 30 }, true},
		{"max_tokens", func(f *results.File) { f.Run.Settings.MaxTokens = 1024 }, true},
		{"endpoint", func(f *results.File) { f.Run.Settings.Endpoint = "chat" }, true},
		{"launch command", func(f *results.File) { f.Run.LaunchCommand += " --max-num-seqs 64" }, true},
		{"simulator time scale", func(f *results.File) { f.Run.Settings.Simulator.Speedup = 20 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := store.ConfigID(runFile(t, tc.change))
			if (got != base) != tc.changes {
				t.Errorf("ConfigID after changing the %s: %s (unchanged: %s); want changed=%v", tc.name, got, base, tc.changes)
			}
		})
	}
}

// TestConfigIDWithoutSettings checks that a file without run settings (an import) gets its
// matrix from its cells.
func TestConfigIDWithoutSettings(t *testing.T) {
	a := runFile(t, func(f *results.File) { f.Run.Settings = nil })
	b := runFile(t, func(f *results.File) { f.Run.Settings = nil; f.Decode = f.Decode[:1] })
	if store.ConfigID(a) == store.ConfigID(b) {
		t.Errorf("files without settings holding different cells share config id %s", store.ConfigID(a))
	}
}

// TestConfigIDServerPort: an engine served on a port picked per run (engine.serve.port 0) puts
// that port in its launch command; runs on different ports are one series, whichever way the
// command names the port. Another number in the command still makes another config.
func TestConfigIDServerPort(t *testing.T) {
	withServer := func(url, launch string) func(*results.File) {
		return func(f *results.File) { f.Run.Settings.URL, f.Run.LaunchCommand = url, launch }
	}
	for _, tc := range []struct {
		name       string
		a, b       func(*results.File)
		sameConfig bool
	}{
		{"the simulator's --listen",
			withServer("http://127.0.0.1:41234", "speedmatrix sim --profile glm-5.3-flash-nvfp4-h200x2 --speedup 40 --listen 127.0.0.1:41234"),
			withServer("http://127.0.0.1:35001", "speedmatrix sim --profile glm-5.3-flash-nvfp4-h200x2 --speedup 40 --listen 127.0.0.1:35001"), true},
		{"vllm's --port N",
			withServer("http://127.0.0.1:41234", "vllm serve org/model --port 41234 --max-num-seqs 64"),
			withServer("http://127.0.0.1:35001", "vllm serve org/model --port 35001 --max-num-seqs 64"), true},
		{"--port=N",
			withServer("http://127.0.0.1:41234", "vllm serve org/model --port=41234"),
			withServer("http://127.0.0.1:35001", "vllm serve org/model --port=35001"), true},
		{"a launch script's positional port",
			withServer("http://127.0.0.1:42659", "sh serve.sh 42659"),
			withServer("http://127.0.0.1:35001", "sh serve.sh 35001"), true},
		{"a flag's value equal to the other run's port",
			withServer("http://127.0.0.1:32", "vllm serve org/model --port 32 --max-num-seqs 32"),
			withServer("http://127.0.0.1:64", "vllm serve org/model --port 64 --max-num-seqs 64"), false},
		{"another setting equal to the port",
			withServer("http://127.0.0.1:64", "vllm serve org/model --port 64 --max-num-seqs 64"),
			withServer("http://127.0.0.1:64", "vllm serve org/model --port 64 --max-num-seqs 32"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := store.ConfigID(runFile(t, tc.a)), store.ConfigID(runFile(t, tc.b))
			if (a == b) != tc.sameConfig {
				t.Errorf("ConfigID %s and %s; want the same config: %v", a, b, tc.sameConfig)
			}
		})
	}
}
