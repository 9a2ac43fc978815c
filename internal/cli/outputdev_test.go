package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputFlagsKeepDevices: every command's output flag, given a character device like
// /dev/null (a node made for the test, major 1 minor 3, so that a failure breaks no other
// program of the machine), writes into it and leaves it a character device. Before, as root,
// import -o /dev/null renamed a regular file over it (results.WriteFileAtomic), and every later
// writer to /dev/null on the machine broke. bisect --output goes through the same writer
// (results.WriteOutput); its run builds a scratch engine per commit, so results'
// TestWriteKinds covers it.
func TestOutputFlagsKeepDevices(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod: %v (run as root to test writes to a device)", err)
	}
	report, _ := filepath.Abs("../../testdata/reference/glm-5.3-flash-nvfp4-h200nvl-x2.txt")
	base, head := filepath.Join(exampleDir, "base.json"), filepath.Join(exampleDir, "head.json")
	st := filepath.Join(dir, "store")
	if _, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(1), base); code != 0 {
		t.Fatalf("store put: exit %d\n%s", code, errOut)
	}
	dev2 := filepath.Join(dir, "null2")
	if err := syscall.Mknod(dev2, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(dir, "shard.json")
	if _, errOut, err := runSimTime(t, nil, "run", "--contexts", "1K", "--concurrency", "1", "--warmup", "0", "--shard", "1/1", "--quiet", "-o", shard); err != nil {
		t.Fatalf("run --shard 1/1: %v\n%s", err, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		sim  bool // runs the built-in simulator (runSimTime)
		ok   int  // an exit status besides 0 that is no failure (compare's 4: unproven)
	}{
		{name: "import -o", args: []string{"import", report, "-o", dev}},
		{name: "compare -o", args: []string{"compare", base, head, "-o", dev}, ok: ExitUndecided},
		{name: "merge -o", args: []string{"merge", shard, "-o", dev}},
		{name: "store get -o", args: []string{"store", "get", "--store", st, commitID(1), "-o", dev}},
		{name: "sim fit -o", args: []string{"sim", "fit", report, "--check=false", "-o", dev}},
		{name: "history --svg", args: []string{"history", "--dir", filepath.Join(exampleDir, "history"), "--cell", "decode/8K/8", "--svg", dev}},
		{name: "--cpuprofile", args: []string{"version", "--cpuprofile", dev}},
		{name: "run -o", sim: true, args: []string{"run", "--contexts", "1K", "--concurrency", "1", "--warmup", "0", "--quiet", "-o", dev}},
		{name: "run --paired --base-output", sim: true, args: []string{"run", "--paired", "--blocks", "2", "--contexts", "1K", "--concurrency", "1", "--warmup", "0", "--quiet", "-o", dev, "--base-output", dev2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, d := range []string{dev, dev2} { // fresh nodes: a case that replaced one fails alone
				os.Remove(d)
				if err := syscall.Mknod(d, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
					t.Fatal(err)
				}
			}
			var errOut string
			var failed bool
			if tc.sim {
				var err error
				_, errOut, err = runSimTime(t, nil, tc.args...)
				failed = err != nil
				if err != nil {
					errOut += err.Error()
				}
			} else {
				var code int
				_, errOut, code = runCLI(tc.args...)
				failed = code != 0 && code != tc.ok
			}
			if failed {
				t.Errorf("%s: failed:\n%s", strings.Join(tc.args, " "), errOut)
			}
			for _, d := range []string{dev, dev2} {
				if st, err := os.Lstat(d); err != nil || st.Mode()&os.ModeCharDevice == 0 {
					t.Fatalf("%s left %s no character device (%v, %v)", strings.Join(tc.args, " "), d, st, err)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("temporary file %s left beside the device", e.Name())
				}
			}
		})
	}
}
