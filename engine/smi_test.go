package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeSMI puts testdata/bin (the fake nvidia-smi) first on PATH with scenario and returns the
// file that records its calls.
func fakeSMI(t *testing.T, scenario string) (log string) {
	t.Helper()
	bin, err := filepath.Abs("testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("testdata/smi")
	log = filepath.Join(t.TempDir(), "smi.log")
	state := t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_SMI", scenario)
	t.Setenv("FAKE_SMI_DIR", dir)
	t.Setenv("FAKE_SMI_LOG", log)
	t.Setenv("FAKE_SMI_STATE", state)
	t.Setenv("FAKE_SMI_APPS", filepath.Join(t.TempDir(), "apps"))
	return log
}

func TestParseGPUs(t *testing.T) {
	h200, _ := os.ReadFile("testdata/smi/h200x2.csv")
	na, _ := os.ReadFile("testdata/smi/na.csv")
	h := GPU{Name: "NVIDIA H200", MemoryTotalMiB: 143771, DriverVersion: "570.124.06", SMClockMHz: 1980,
		MemClockMHz: 3201, MaxSMClockMHz: 1980, MaxMemClockMHz: 3201, PowerLimitW: 700, PersistenceMode: "Enabled"}
	h1 := h
	h1.Index, h1.SMClockMHz = 1, 345
	tests := []struct {
		name    string
		in      []byte
		want    []GPU
		wantErr string
	}{
		{"two H200", h200, []GPU{h, h1}, ""},
		{"N/A and Not Supported are unknown", na, []GPU{{Name: "NVIDIA GeForce RTX 4090", MemoryTotalMiB: 24564,
			DriverVersion: "550.54.14", MaxSMClockMHz: 3105, MaxMemClockMHz: 10501}}, ""},
		{"no GPU", nil, nil, ""},
		{"an impossible memory size reads as unknown", []byte("0, NVIDIA GeForce RTX 4090, 1, 24e64, 550.54.14, [N/A], [N/A], 3105, 10501, [N/A], [N/A]\n"),
			[]GPU{{Name: "NVIDIA GeForce RTX 4090", DriverVersion: "550.54.14", MaxSMClockMHz: 3105, MaxMemClockMHz: 10501}}, ""},
		{"wrong field count", []byte("0, NVIDIA H200, 1\n"), nil, "wrong number of fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseGPUs(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpEmpty); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []GPU) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return cmp.Equal(a, b)
})

func TestParseComputeApps(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ComputeApp
	}{
		{"none", "", nil},
		{"none, old driver", "No running processes found\n", nil},
		{"two", "4242, /usr/bin/python3, 130000\n4243, VLLM::EngineCore, [N/A]\n",
			[]ComputeApp{{4242, "/usr/bin/python3", 130000}, {4243, "VLLM::EngineCore", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseComputeApps([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	if _, err := parseComputeApps([]byte("python, 1, 2\n")); err == nil {
		t.Error("a pid that is not a number: no error")
	}
}

func TestParseCUDAVersion(t *testing.T) {
	h, _ := os.ReadFile("testdata/smi/h200x2.txt")
	na, _ := os.ReadFile("testdata/smi/na.txt")
	if got := parseCUDAVersion(h); got != "12.8" {
		t.Errorf("CUDA version %q, want 12.8", got)
	}
	if got := parseCUDAVersion(na); got != "" {
		t.Errorf("CUDA version of N/A %q, want empty", got)
	}
}

func TestParseCPUModelAndOS(t *testing.T) {
	cpu := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\nprocessor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\n"
	if got := parseCPUModel([]byte(cpu)); got != "AMD EPYC 9654 96-Core Processor" {
		t.Errorf("CPU model %q", got)
	}
	arm := "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU part\t: 0xd4f\n"
	if got := parseCPUModel([]byte(arm)); got != "0xd4f" {
		t.Errorf("arm CPU model %q", got)
	}
	osr := "NAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nPRETTY_NAME=\"Ubuntu 24.04.2 LTS\"\n"
	if got := parseOSRelease([]byte(osr)); got != "Ubuntu 24.04.2 LTS" {
		t.Errorf("OS %q", got)
	}
	if got := parseOSRelease([]byte("NAME=Debian\nVERSION_ID=12\n")); got != "Debian 12" {
		t.Errorf("OS without PRETTY_NAME %q", got)
	}
}

// TestHardwareFakeSMI gathers the fingerprint through a fake nvidia-smi on PATH.
func TestHardwareFakeSMI(t *testing.T) {
	log := fakeSMI(t, "h200x2")
	if err := os.WriteFile(os.Getenv("FAKE_SMI_APPS"), []byte(itoa(os.Getpid())+", python3, 1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"/proc/cpuinfo":   "model name\t: Intel(R) Xeon(R) Platinum 8480+\n",
		"/etc/os-release": "PRETTY_NAME=\"Ubuntu 22.04.5 LTS\"\n",
	}
	p := HardwareProbe{
		ReadFile: func(name string) ([]byte, error) {
			if v, ok := files[name]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		},
		Kernel: func() string { return "6.8.0-60-generic" },
	}
	f := p.Probe(context.Background())
	if f.GPUModel() != "NVIDIA H200" || len(f.GPUs) != 2 {
		t.Errorf("GPUs %q x %d, want NVIDIA H200 x 2", f.GPUModel(), len(f.GPUs))
	}
	if f.DriverVersion != "570.124.06" || f.CUDAVersion != "12.8" {
		t.Errorf("driver %q CUDA %q", f.DriverVersion, f.CUDAVersion)
	}
	if f.GPUs[0].PowerLimitW != 700 || f.GPUs[0].PersistenceMode != "Enabled" || f.GPUs[1].SMClockMHz != 345 {
		t.Errorf("GPU facts %+v", f.GPUs)
	}
	if f.CPUModel != "Intel(R) Xeon(R) Platinum 8480+" || f.OS != "Ubuntu 22.04.5 LTS" || f.Kernel != "6.8.0-60-generic" {
		t.Errorf("machine %q %q %q", f.CPUModel, f.OS, f.Kernel)
	}
	if len(f.OtherGPUProcesses) != 1 || f.OtherGPUProcesses[0].PID != os.Getpid() {
		t.Errorf("other GPU processes %+v, want this test's pid", f.OtherGPUProcesses)
	}
	if len(f.Notes) != 0 {
		t.Errorf("notes %q, want none", f.Notes)
	}
	calls, _ := os.ReadFile(log)
	if !strings.Contains(string(calls), "--query-gpu="+gpuQuery+" --format=csv,noheader,nounits") {
		t.Errorf("nvidia-smi calls:\n%s\nwant the documented query", calls)
	}
}

// TestHardwareWithoutSMI: no nvidia-smi means unknown GPUs with a note, not an error.
func TestHardwareWithoutSMI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	f := Hardware(context.Background())
	if f.GPUModel() != "unknown" || len(f.GPUs) != 0 {
		t.Errorf("GPUs %q %v, want unknown", f.GPUModel(), f.GPUs)
	}
	if len(f.Notes) != 1 || !strings.Contains(f.Notes[0], "nvidia-smi not found") {
		t.Errorf("notes %q", f.Notes)
	}
	if f.CPUs == 0 {
		t.Error("no CPU count")
	}
	if _, err := (NvidiaSMI{Path: "/no/such/nvidia-smi"}).Run(context.Background()); !errors.Is(err, ErrNoSMI) {
		t.Errorf("a missing nvidia-smi path: %v, want ErrNoSMI", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func FuzzParseGPUs(f *testing.F) {
	for _, name := range []string{"testdata/smi/h200x2.csv", "testdata/smi/na.csv"} {
		data, _ := os.ReadFile(name)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gpus, err := parseGPUs(data)
		if err == nil {
			for _, g := range gpus {
				if g.MemoryTotalMiB < 0 && !strings.Contains(string(data), "-") {
					t.Errorf("negative memory from %q", data)
				}
			}
		}
	})
}

func FuzzParseComputeApps(f *testing.F) {
	f.Add([]byte("4242, /usr/bin/python3, 130000\n"))
	f.Add([]byte("No running processes found\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		apps, err := parseComputeApps(data)
		if err != nil && apps != nil {
			t.Errorf("apps %v with error %v", apps, err)
		}
	})
}
