package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// groupMembers returns the live processes of process group pgid, read from /proc.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(data), ')')
		f := strings.Fields(string(data[i+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitFile waits (bounded by polls, not by a clock) until path holds a line, and returns it.
func waitFile(t *testing.T, path string, helper *exec.Cmd, stderr *strings.Builder) string {
	t.Helper()
	for range 3000 {
		if data, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(data), "\n") {
			return strings.TrimSpace(string(data))
		}
		if helper.ProcessState != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never written; speedmatrix's stderr:\n%s", path, stderr.String())
	return ""
}

// TestRunEngineSIGKILLLeavesNoProcess: speedmatrix SIGKILLed while its server (which forked a
// grandchild) loads leaves no process of the server's group behind: the reaper leading the
// group gets its parent-death signal and kills the whole group.
func TestRunEngineSIGKILLLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	grandchild := filepath.Join(dir, "grandchild.pid")
	c := newEngineCase(t, engineMatrix, []string{"bash", "-c", `sleep 300 & echo $! > "$0"; wait`, grandchild}, "")
	var stderr strings.Builder
	helper := exec.Command(os.Args[0], "-test.run=^TestEngineServeHelper$", "--", "run", "--config", c.config, "-o", c.out)
	helper.Env = append(os.Environ(), "SPEEDMATRIX_ENGINE_HELPER=1", "KEY="+engineKey)
	helper.Stderr = &lockedWriter{w: &stderr}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = helper.Wait(); close(exited) }()
	gc, _ := strconv.Atoi(waitFile(t, grandchild, helper, &stderr))
	pgid, err := strconv.Atoi(waitFile(t, c.pidFile, helper, &stderr))
	if err != nil || gc == 0 {
		t.Fatalf("pids: group %q, grandchild %d", err, gc)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	if len(groupMembers(pgid)) < 2 {
		t.Fatalf("group %d has %v: want the server and its grandchild running", pgid, groupMembers(pgid))
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	var left []int
	for range 2000 { // the kernel's signals are asynchronous: poll, bounded by a count
		if left = groupMembers(pgid); len(left) == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("processes %v of the server's group %d outlived speedmatrix's SIGKILL", left, pgid)
	}
	if err := syscall.Kill(gc, 0); !errors.Is(err, syscall.ESRCH) && len(groupMembers(pgid)) > 0 {
		t.Errorf("the grandchild %d is still there: %v", gc, err)
	}
}
