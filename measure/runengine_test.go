package measure

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/results"
)

func TestIsLoopbackURL(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:8000": true, "http://localhost:8000/v1": true, "http://[::1]:80": true, "http://127.1.2.3": true,
		"http://10.0.0.5:8000": false, "https://api.example.com": false, "::bad": false,
	} {
		if got := isLoopbackURL(u); got != want {
			t.Errorf("isLoopbackURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestHardwareFromFingerprint: nvidia-smi's facts map into the results' hardware; without
// nvidia-smi the GPU facts stay empty (unknown), not an error.
func TestHardwareFromFingerprint(t *testing.T) {
	h200 := engine.GPU{Name: "NVIDIA H200", MemoryTotalMiB: 143771, DriverVersion: "570.124.06", SMClockMHz: 1980, MemClockMHz: 3201,
		MaxSMClockMHz: 1980, MaxMemClockMHz: 3201, PowerLimitW: 700, PersistenceMode: "Enabled"}
	second := h200
	second.Index, second.PersistenceMode, second.PowerLimitW = 1, "Disabled", 600
	tests := []struct {
		name string
		fp   engine.Fingerprint
		lock *engine.ClockLock
		want results.Hardware
	}{
		{"no nvidia-smi", engine.Fingerprint{CPUModel: "AMD EPYC 9654", OS: "Ubuntu 24.04 LTS", Kernel: "6.8.0", Notes: []string{"nvidia-smi not found"}},
			nil, results.Hardware{CPUModel: "AMD EPYC 9654", OS: "Ubuntu 24.04 LTS, Linux 6.8.0"}},
		{"one GPU, clocks free", engine.Fingerprint{GPUs: []engine.GPU{h200}, DriverVersion: "570.124.06", CUDAVersion: "12.8",
			OtherGPUProcesses: []engine.ComputeApp{{PID: 7, Name: "python", UsedMiB: 2048}}}, nil,
			results.Hardware{GPU: "NVIDIA H200", GPUCount: 1, VRAMPerGPUGB: 150.8, Driver: "570.124.06", CUDA: "12.8", PowerLimitW: 700,
				PersistenceMode: "Enabled", Clocks: "not locked (SM 1980 MHz, memory 3201 MHz, max SM 1980 MHz, max memory 3201 MHz)",
				OtherGPUProcesses: []string{"pid 7 python (2048 MiB)"}}},
		{"two GPUs that differ, locked", engine.Fingerprint{GPUs: []engine.GPU{h200, second}, DriverVersion: "570.124.06"},
			&engine.ClockLock{GPUs: []engine.LockedGPU{{SMClockMHz: 1980}}},
			results.Hardware{GPU: "NVIDIA H200", GPUCount: 2, VRAMPerGPUGB: 150.8, Driver: "570.124.06", PowerLimitW: 700,
				PersistenceMode: "mixed", Clocks: "locked: SM 1980 MHz, memory not locked", ClocksLocked: true,
				Extra: []results.KV{{Key: "power_limits_w", Value: "0: 700, 1: 600"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, hardwareFromFingerprint(tt.fp, tt.lock)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestEngineLaunchCommand: the launch command as recorded has the server's environment and
// arguments with every secret redacted, and the key from the environment redacted anywhere.
func TestEngineLaunchCommand(t *testing.T) {
	s := &engineSecrets{}
	s.add(engineKey)
	argv := []string{"vllm", "serve", "m", "--api-key", engineKey, "--hf-token=hf_abcdef", "--max-num-batched-tokens", "8192",
		"--chat-template", "a b", "--served-model-name", "x" + engineKey}
	got := s.launchCommand(argv, map[string]string{"HF_TOKEN": "hf_abcdef", "VLLM_USE_FLASHINFER_MOE_FP4": "1"})
	want := "HF_TOKEN=<redacted> VLLM_USE_FLASHINFER_MOE_FP4=1 vllm serve m --api-key <redacted> --hf-token=<redacted> --max-num-batched-tokens 8192 --chat-template 'a b' --served-model-name x<redacted>"
	if got != want {
		t.Errorf("launchCommand =\n%s\nwant\n%s", got, want)
	}
	if got := secretArgValues(argv); !cmp.Equal(got, []string{engineKey, "hf_abcdef"}) {
		t.Errorf("secretArgValues = %q", got)
	}
}

func TestShellWord(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"<redacted>", "<redacted>"},
		{"--api-key=<redacted>", "--api-key=<redacted>"},
		{"/models/glm:5,6@x%+.", "/models/glm:5,6@x%+."},
		{"a b", "'a b'"},
		{"it's <redacted>", `'it'\''s <redacted>'`},
		{"$HOME", "'$HOME'"},
	}
	for _, tt := range tests {
		if got := shellWord(tt.in); got != tt.want {
			t.Errorf("shellWord(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// engineKey is an API key a served run is given: it must appear in no output, file or error.
const engineKey = "sk-engine-test-s3cret"
