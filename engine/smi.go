package engine

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// SMI runs nvidia-smi with args and returns its standard output. It is the engine's one
// interface to the GPU driver; NvidiaSMI is the real one, and tests put a fake nvidia-smi on
// PATH.
type SMI interface {
	Run(ctx context.Context, args ...string) ([]byte, error)
}

// ErrNoSMI means nvidia-smi is not installed (or not on PATH): the GPU facts are unknown and
// the GPU checks are skipped.
var ErrNoSMI = errors.New("nvidia-smi not found on PATH")

// SMIError is nvidia-smi exiting with a non-zero code.
type SMIError struct {
	Args     []string
	ExitCode int
	Output   string // its stdout and stderr, trimmed
}

func (e *SMIError) Error() string {
	return fmt.Sprintf("nvidia-smi %s: exit code %d: %s", strings.Join(e.Args, " "), e.ExitCode, e.Output)
}

// NvidiaSMI runs the nvidia-smi binary found at Path, or on PATH when Path is empty.
type NvidiaSMI struct{ Path string }

// Run runs nvidia-smi with args. It returns ErrNoSMI when the binary cannot be found, and an
// *SMIError when it exits with a non-zero code.
func (n NvidiaSMI) Run(ctx context.Context, args ...string) ([]byte, error) {
	path := n.Path
	if path == "" {
		p, err := exec.LookPath("nvidia-smi")
		if err != nil {
			return nil, ErrNoSMI
		}
		path = p
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoSMI
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		out := strings.TrimSpace(stdout.String() + "\n" + stderr.String())
		return stdout.Bytes(), &SMIError{Args: args, ExitCode: ee.ExitCode(), Output: out}
	}
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi: %w", err)
	}
	return stdout.Bytes(), nil
}

// smiOrDefault returns s, or the real nvidia-smi on PATH when s is nil.
func smiOrDefault(s SMI) SMI {
	if s == nil {
		return NvidiaSMI{}
	}
	return s
}

// gpuQuery is the --query-gpu field list of the hardware facts, in the order parseGPUs reads
// them (field names as nvidia-smi --help-query-gpu documents them).
const gpuQuery = "index,name,count,memory.total,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode"

// GPU is what nvidia-smi says of one GPU. Numbers are 0 and strings empty where nvidia-smi
// answered "[N/A]" or "[Not Supported]".
type GPU struct {
	Index           int     `json:"index"`
	Name            string  `json:"name,omitempty"`
	MemoryTotalMiB  int     `json:"memory_total_mib,omitempty"`
	DriverVersion   string  `json:"driver_version,omitempty"`
	SMClockMHz      int     `json:"sm_clock_mhz,omitempty"`      // current
	MemClockMHz     int     `json:"mem_clock_mhz,omitempty"`     // current
	MaxSMClockMHz   int     `json:"max_sm_clock_mhz,omitempty"`  // the most the GPU can run at
	MaxMemClockMHz  int     `json:"max_mem_clock_mhz,omitempty"` // the most the GPU can run at
	PowerLimitW     float64 `json:"power_limit_w,omitempty"`     // the enforced board limit
	PersistenceMode string  `json:"persistence_mode,omitempty"`  // "Enabled" or "Disabled"
}

// ComputeApp is a process that holds a GPU context, as nvidia-smi --query-compute-apps lists it.
type ComputeApp struct {
	PID     int    `json:"pid"`
	Name    string `json:"name,omitempty"`
	UsedMiB int    `json:"used_mib,omitempty"`
}

func (a ComputeApp) String() string {
	return fmt.Sprintf("pid %d %s (%d MiB)", a.PID, a.Name, a.UsedMiB)
}

// unknownValue reports whether an nvidia-smi CSV value stands for "no value": "[N/A]",
// "[Not Supported]", "[Unknown Error]", "[Insufficient Permissions]" and the like.
func unknownValue(s string) bool {
	return s == "" || s == "N/A" || strings.HasPrefix(s, "[")
}

// readCSV splits nvidia-smi's "--format=csv,noheader,nounits" output into records of n fields.
func readCSV(data []byte, n int) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = n
	r.LazyQuotes = true
	var recs [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi output: %w", err)
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		recs = append(recs, rec)
	}
}

func atoiOrZero(s string) int {
	if unknownValue(s) {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	// A value no GPU can have (NaN, infinite, negative or beyond any int)
	// reads as unknown rather than wrapping around to a wrong number.
	if err != nil || math.IsNaN(f) || f < 0 || f >= math.MaxInt32 {
		return 0
	}
	return int(f + 0.5)
}

func floatOrZero(s string) float64 {
	if unknownValue(s) {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f
}

func strOrEmpty(s string) string {
	if unknownValue(s) {
		return ""
	}
	return s
}

// parseGPUs parses the output of --query-gpu=gpuQuery --format=csv,noheader,nounits.
func parseGPUs(data []byte) ([]GPU, error) {
	recs, err := readCSV(data, 11)
	if err != nil {
		return nil, err
	}
	gpus := make([]GPU, 0, len(recs))
	for i, r := range recs {
		idx, err := strconv.Atoi(r[0])
		if err != nil {
			idx = i
		}
		gpus = append(gpus, GPU{
			Index:           idx,
			Name:            strOrEmpty(r[1]),
			MemoryTotalMiB:  atoiOrZero(r[3]),
			DriverVersion:   strOrEmpty(r[4]),
			SMClockMHz:      atoiOrZero(r[5]),
			MemClockMHz:     atoiOrZero(r[6]),
			MaxSMClockMHz:   atoiOrZero(r[7]),
			MaxMemClockMHz:  atoiOrZero(r[8]),
			PowerLimitW:     floatOrZero(r[9]),
			PersistenceMode: strOrEmpty(r[10]),
		})
	}
	return gpus, nil
}

// computeAppsQuery lists the processes holding a GPU context.
var computeAppsQuery = []string{"--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"}

// parseComputeApps parses the output of --query-compute-apps=pid,process_name,used_memory
// --format=csv,noheader,nounits. nvidia-smi prints "No running processes found" on some
// versions when the list is empty.
func parseComputeApps(data []byte) ([]ComputeApp, error) {
	var lines [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 || bytes.HasPrefix(l, []byte("No running")) {
			continue
		}
		lines = append(lines, l)
	}
	recs, err := readCSV(bytes.Join(lines, []byte("\n")), 3)
	if err != nil {
		return nil, err
	}
	apps := make([]ComputeApp, 0, len(recs))
	for _, r := range recs {
		pid, err := strconv.Atoi(r[0])
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi compute apps: pid %q is not a number", r[0])
		}
		apps = append(apps, ComputeApp{PID: pid, Name: strOrEmpty(r[1]), UsedMiB: atoiOrZero(r[2])})
	}
	return apps, nil
}

// ComputeApps lists the processes that hold a GPU context now. It returns ErrNoSMI when
// nvidia-smi is not installed.
func ComputeApps(ctx context.Context, smi SMI) ([]ComputeApp, error) {
	out, err := smiOrDefault(smi).Run(ctx, computeAppsQuery...)
	if err != nil {
		return nil, err
	}
	return parseComputeApps(out)
}

// memoryUsed returns memory.used of every GPU, in MiB.
func memoryUsed(ctx context.Context, smi SMI) ([]int, error) {
	out, err := smiOrDefault(smi).Run(ctx, "--query-gpu=memory.used", "--format=csv,noheader,nounits")
	if err != nil {
		return nil, err
	}
	recs, err := readCSV(out, 1)
	if err != nil {
		return nil, err
	}
	used := make([]int, len(recs))
	for i, r := range recs {
		used[i] = atoiOrZero(r[0])
	}
	return used, nil
}

var cudaVersionRE = regexp.MustCompile(`CUDA Version:\s*([0-9][0-9.]*)`)

// parseCUDAVersion finds the driver's CUDA version in the header of plain nvidia-smi output
// ("| NVIDIA-SMI 570.124.06   Driver Version: 570.124.06   CUDA Version: 12.8 |").
func parseCUDAVersion(data []byte) string {
	m := cudaVersionRE.FindSubmatch(data)
	if m == nil {
		return ""
	}
	return string(m[1])
}
