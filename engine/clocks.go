package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNotPermitted means nvidia-smi refused to change the GPU's settings: locking clocks needs
// root (or the driver's permission for the user).
var ErrNotPermitted = errors.New("not permitted to lock the GPU clocks")

// LockOptions says at which clocks LockClocks locks the GPUs; 0 means the GPU's maximum.
type LockOptions struct {
	SMClockMHz  int
	MemClockMHz int
}

// LockedGPU is one GPU whose clocks LockClocks locked.
type LockedGPU struct {
	Index           int    `json:"index"`
	SMClockMHz      int    `json:"sm_clock_mhz"`
	MemClockMHz     int    `json:"mem_clock_mhz,omitempty"` // 0: memory clock not locked (unsupported)
	PrevPersistence string `json:"prev_persistence_mode,omitempty"`
}

// ClockLock records locked GPU clocks (for the results) and restores them.
type ClockLock struct {
	GPUs     []LockedGPU `json:"gpus"`
	Commands []string    `json:"commands"`           // the nvidia-smi commands run, in order
	Warnings []string    `json:"warnings,omitempty"` // e.g. a memory clock that cannot be locked
	smi      SMI
	undo     [][]string // nvidia-smi argument lists that restore, in the order to run them
}

// LockClocks locks the SM and memory clocks of every GPU (nvidia-smi -pm 1, -lgc, -lmc) so
// that a run is not at the mercy of boost clocks, and returns what it did; call Restore
// afterwards. When nvidia-smi refuses (no permission), it restores what it changed and
// returns an error wrapping ErrNotPermitted. A GPU whose memory clock cannot be locked
// ("Not Supported") is kept with a warning. It returns ErrNoSMI without nvidia-smi.
func LockClocks(ctx context.Context, smi SMI, o LockOptions) (*ClockLock, error) {
	smi = smiOrDefault(smi)
	out, err := smi.Run(ctx, "--query-gpu=index,persistence_mode,clocks.max.sm,clocks.max.mem", "--format=csv,noheader,nounits")
	if err != nil {
		return nil, fmt.Errorf("lock GPU clocks: %w", err)
	}
	recs, err := readCSV(out, 4)
	if err != nil {
		return nil, fmt.Errorf("lock GPU clocks: %w", err)
	}
	if len(recs) == 0 {
		return nil, errors.New("lock GPU clocks: nvidia-smi lists no GPU")
	}
	l := &ClockLock{smi: smi}
	for _, r := range recs {
		g := LockedGPU{PrevPersistence: strOrEmpty(r[1]), SMClockMHz: o.SMClockMHz, MemClockMHz: o.MemClockMHz}
		if g.Index, err = strconv.Atoi(r[0]); err != nil {
			return nil, fmt.Errorf("lock GPU clocks: GPU index %q is not a number", r[0])
		}
		if g.SMClockMHz == 0 {
			g.SMClockMHz = atoiOrZero(r[2])
		}
		if g.MemClockMHz == 0 {
			g.MemClockMHz = atoiOrZero(r[3])
		}
		if g.SMClockMHz == 0 {
			return nil, fmt.Errorf("lock GPU clocks: nvidia-smi gives no maximum SM clock for GPU %d; set the clock to lock at", g.Index)
		}
		if err := l.lockGPU(ctx, &g); err != nil {
			rerr := l.Restore(ctx)
			return nil, errors.Join(err, rerr)
		}
		l.GPUs = append(l.GPUs, g)
	}
	return l, nil
}

// lockGPU locks one GPU and records how to undo each step.
func (l *ClockLock) lockGPU(ctx context.Context, g *LockedGPU) error {
	i := strconv.Itoa(g.Index)
	if g.PrevPersistence != "Enabled" {
		if err := l.run(ctx, "-i", i, "-pm", "1"); err != nil {
			return err
		}
		l.undo = append(l.undo, []string{"-i", i, "-pm", "0"})
	}
	if err := l.run(ctx, "-i", i, "-lgc", fmt.Sprintf("%d,%d", g.SMClockMHz, g.SMClockMHz)); err != nil {
		return err
	}
	l.undo = append(l.undo, []string{"-i", i, "-rgc"})
	if g.MemClockMHz == 0 {
		l.Warnings = append(l.Warnings, fmt.Sprintf("GPU %d: no maximum memory clock known; memory clock not locked", g.Index))
		return nil
	}
	err := l.run(ctx, "-i", i, "-lmc", fmt.Sprintf("%d,%d", g.MemClockMHz, g.MemClockMHz))
	var se *SMIError
	if errors.As(err, &se) && notSupported(se) {
		l.Warnings = append(l.Warnings, fmt.Sprintf("GPU %d: memory clock locking not supported (%s)", g.Index, se.Output))
		g.MemClockMHz = 0
		return nil
	}
	if err != nil {
		return err
	}
	l.undo = append(l.undo, []string{"-i", i, "-rmc"})
	return nil
}

// run runs one changing nvidia-smi command and records it.
func (l *ClockLock) run(ctx context.Context, args ...string) error {
	l.Commands = append(l.Commands, "nvidia-smi "+strings.Join(args, " "))
	out, err := l.smi.Run(ctx, args...)
	var se *SMIError
	switch {
	case errors.As(err, &se) && notPermitted(se):
		return fmt.Errorf("%w: nvidia-smi %s said %q; run speedmatrix as root (or sudo nvidia-smi -pm 1 and -lgc once on the runner) or turn gpu.lock_clocks off", ErrNotPermitted, strings.Join(args, " "), se.Output)
	case err != nil:
		return fmt.Errorf("lock GPU clocks: %w", err)
	case permissionText(string(out)):
		// Some nvidia-smi versions print the refusal and still exit 0.
		return fmt.Errorf("%w: nvidia-smi %s said %q; run speedmatrix as root or turn gpu.lock_clocks off", ErrNotPermitted, strings.Join(args, " "), strings.TrimSpace(string(out)))
	}
	return nil
}

// Restore undoes every change LockClocks made, the last first (-rmc, -rgc, the previous
// persistence mode). It runs every step even when one fails, and returns the failures.
func (l *ClockLock) Restore(ctx context.Context) error {
	if l == nil {
		return nil
	}
	var errs []error
	for i := len(l.undo) - 1; i >= 0; i-- {
		args := l.undo[i]
		l.Commands = append(l.Commands, "nvidia-smi "+strings.Join(args, " "))
		if _, err := l.smi.Run(ctx, args...); err != nil {
			errs = append(errs, fmt.Errorf("restore GPU clocks: %w", err))
		}
	}
	l.undo = nil
	return errors.Join(errs...)
}

// nvidia-smi's exit codes (nvidia-smi(1), RETURN VALUE).
const (
	smiExitNotSupported = 3
	smiExitNoPermission = 4
)

func notPermitted(e *SMIError) bool {
	return e.ExitCode == smiExitNoPermission || permissionText(e.Output)
}

func permissionText(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "insufficient permissions") || strings.Contains(s, "requires root") || strings.Contains(s, "not have permission")
}

func notSupported(e *SMIError) bool {
	return !notPermitted(e) && (e.ExitCode == smiExitNotSupported || strings.Contains(strings.ToLower(e.Output), "not supported"))
}
