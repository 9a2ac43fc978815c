package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// Fingerprint is what a results file records of the machine it was measured on, so that a
// comparison can tell whether base and head ran on comparable hardware. Unknown facts are
// empty, with a note saying why.
type Fingerprint struct {
	GPUs          []GPU  `json:"gpus,omitempty"`
	DriverVersion string `json:"driver_version,omitempty"`
	CUDAVersion   string `json:"cuda_version,omitempty"` // the driver's, from nvidia-smi's header
	CPUModel      string `json:"cpu_model,omitempty"`
	CPUs          int    `json:"cpus,omitempty"` // logical CPUs
	OS            string `json:"os,omitempty"`   // PRETTY_NAME of /etc/os-release
	Kernel        string `json:"kernel,omitempty"`
	// OtherGPUProcesses are the processes that held a GPU when the facts were taken.
	OtherGPUProcesses []ComputeApp `json:"other_gpu_processes,omitempty"`
	Notes             []string     `json:"notes,omitempty"`
}

// GPUModel returns the name of the GPUs ("NVIDIA H200"), names joined by " + " when they
// differ, or "unknown".
func (f Fingerprint) GPUModel() string {
	var names []string
	for _, g := range f.GPUs {
		if g.Name != "" && !slices.Contains(names, g.Name) {
			names = append(names, g.Name)
		}
	}
	if len(names) == 0 {
		return "unknown"
	}
	return strings.Join(names, " + ")
}

// HardwareProbe gathers a Fingerprint. Its zero value reads the real machine; tests replace
// the nvidia-smi runner and the files.
type HardwareProbe struct {
	SMI      SMI                          // nil: nvidia-smi on PATH
	ReadFile func(string) ([]byte, error) // nil: os.ReadFile
	Kernel   func() string                // nil: uname -r
}

// Hardware gathers the machine's fingerprint with nvidia-smi on PATH and the real /proc and
// /etc. It never fails: what cannot be known is left empty with a note (no nvidia-smi means
// the GPUs are "unknown").
func Hardware(ctx context.Context) Fingerprint {
	return HardwareProbe{}.Probe(ctx)
}

// Probe gathers the fingerprint; see Hardware.
func (p HardwareProbe) Probe(ctx context.Context) Fingerprint {
	smi := smiOrDefault(p.SMI)
	readFile := p.ReadFile
	if readFile == nil {
		readFile = os.ReadFile
	}
	var f Fingerprint
	f.CPUs = runtime.NumCPU()
	if data, err := readFile("/proc/cpuinfo"); err == nil {
		f.CPUModel = parseCPUModel(data)
	}
	if data, err := readFile("/etc/os-release"); err == nil {
		f.OS = parseOSRelease(data)
	}
	if p.Kernel != nil {
		f.Kernel = p.Kernel()
	} else {
		f.Kernel = unameRelease()
	}

	out, err := smi.Run(ctx, "--query-gpu="+gpuQuery, "--format=csv,noheader,nounits")
	if errors.Is(err, ErrNoSMI) {
		f.Notes = append(f.Notes, "nvidia-smi not found: GPU facts unknown")
		return f
	}
	if err != nil {
		f.Notes = append(f.Notes, fmt.Sprintf("GPU facts unknown: %v", err))
		return f
	}
	gpus, err := parseGPUs(out)
	if err != nil {
		f.Notes = append(f.Notes, fmt.Sprintf("GPU facts unknown: %v", err))
		return f
	}
	f.GPUs = gpus
	for _, g := range gpus {
		if g.DriverVersion != "" {
			f.DriverVersion = g.DriverVersion
			break
		}
	}
	if header, err := smi.Run(ctx); err == nil {
		f.CUDAVersion = parseCUDAVersion(header)
	}
	if f.CUDAVersion == "" {
		f.Notes = append(f.Notes, "CUDA version unknown: not in nvidia-smi's header")
	}
	apps, err := ComputeApps(ctx, smi)
	if err != nil {
		f.Notes = append(f.Notes, fmt.Sprintf("GPU processes unknown: %v", err))
	}
	f.OtherGPUProcesses = apps
	return f
}

// parseCPUModel returns the first "model name" of /proc/cpuinfo (x86), or the "Hardware" or
// "CPU part" line on machines that have no model name.
func parseCPUModel(data []byte) string {
	var fallback string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			return v
		case "Hardware", "CPU part":
			if fallback == "" {
				fallback = v
			}
		}
	}
	return fallback
}

// parseOSRelease returns PRETTY_NAME of an os-release file, or NAME VERSION_ID.
func parseOSRelease(data []byte) string {
	vals := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		vals[k] = strings.Trim(v, `"'`)
	}
	if v := vals["PRETTY_NAME"]; v != "" {
		return v
	}
	return strings.TrimSpace(vals["NAME"] + " " + vals["VERSION_ID"])
}

// unameRelease returns the kernel release (uname -r).
func unameRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}
