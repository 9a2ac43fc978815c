package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// smiState returns the fake nvidia-smi's clock settings: file name → content.
func smiState(t *testing.T) map[string]string {
	t.Helper()
	dir := os.Getenv("FAKE_SMI_STATE")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		m[e.Name()] = strings.TrimSpace(string(data))
	}
	return m
}

func TestLockClocksAndRestore(t *testing.T) {
	fakeSMI(t, "h200x2")
	ctx := context.Background()
	l, err := LockClocks(ctx, nil, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []LockedGPU{
		{Index: 0, SMClockMHz: 1980, MemClockMHz: 3201, PrevPersistence: "Disabled"},
		{Index: 1, SMClockMHz: 1980, MemClockMHz: 3201, PrevPersistence: "Enabled"},
	}
	if diff := cmp.Diff(want, l.GPUs); diff != "" {
		t.Errorf("locked GPUs (-want +got)\n%s", diff)
	}
	// The GPUs hold what was asked: persistence on for GPU 0 (GPU 1 had it), clocks at max.
	if diff := cmp.Diff(map[string]string{"pm-0": "1", "lgc-0": "1980,1980", "lmc-0": "3201,3201",
		"lgc-1": "1980,1980", "lmc-1": "3201,3201"}, smiState(t)); diff != "" {
		t.Errorf("GPU state while locked (-want +got)\n%s", diff)
	}
	if err := l.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	// Restored: clocks reset, GPU 0's persistence mode back off.
	if diff := cmp.Diff(map[string]string{"pm-0": "0"}, smiState(t)); diff != "" {
		t.Errorf("GPU state after restore (-want +got)\n%s", diff)
	}
	wantCmds := []string{"nvidia-smi -i 0 -pm 1", "nvidia-smi -i 0 -lgc 1980,1980", "nvidia-smi -i 0 -lmc 3201,3201",
		"nvidia-smi -i 1 -lgc 1980,1980", "nvidia-smi -i 1 -lmc 3201,3201",
		"nvidia-smi -i 1 -rmc", "nvidia-smi -i 1 -rgc", "nvidia-smi -i 0 -rmc", "nvidia-smi -i 0 -rgc", "nvidia-smi -i 0 -pm 0"}
	if diff := cmp.Diff(wantCmds, l.Commands); diff != "" {
		t.Errorf("commands (-want +got)\n%s", diff)
	}
}

func TestLockClocksGivenValue(t *testing.T) {
	fakeSMI(t, "h200x2")
	l, err := LockClocks(context.Background(), nil, LockOptions{SMClockMHz: 1755})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Restore(context.Background())
	if got := smiState(t)["lgc-1"]; got != "1755,1755" {
		t.Errorf("GPU 1 locked at %q, want 1755,1755", got)
	}
}

// TestLockClocksNotPermitted: a refusal is ErrNotPermitted, says what to do, and leaves the
// GPUs as they were.
func TestLockClocksNotPermitted(t *testing.T) {
	fakeSMI(t, "h200x2")
	t.Setenv("FAKE_SMI_NOPERM", "1")
	_, err := LockClocks(context.Background(), nil, LockOptions{})
	if !errors.Is(err, ErrNotPermitted) {
		t.Fatalf("err = %v, want ErrNotPermitted", err)
	}
	for _, want := range []string{"Insufficient Permissions", "root", "lock_clocks"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if s := smiState(t); len(s) != 0 {
		t.Errorf("GPU state after a refusal: %v, want untouched", s)
	}
}

// TestLockClocksMemoryUnsupported: a memory clock that cannot be locked is a warning; the SM
// clock stays locked and is restored.
func TestLockClocksMemoryUnsupported(t *testing.T) {
	fakeSMI(t, "h200x2")
	t.Setenv("FAKE_SMI_NOLMC", "1")
	ctx := context.Background()
	l, err := LockClocks(ctx, nil, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) != 2 || l.GPUs[0].MemClockMHz != 0 {
		t.Errorf("warnings %q, GPU 0 memory clock %d; want two warnings and 0", l.Warnings, l.GPUs[0].MemClockMHz)
	}
	if err := l.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for k := range smiState(t) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if diff := cmp.Diff([]string{"pm-0"}, keys); diff != "" {
		t.Errorf("state after restore (-want +got)\n%s", diff)
	}
}

func TestLockClocksWithoutSMI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := LockClocks(context.Background(), nil, LockOptions{}); !errors.Is(err, ErrNoSMI) {
		t.Errorf("err = %v, want ErrNoSMI", err)
	}
}
