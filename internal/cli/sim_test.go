package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimFitPrintsNotes checks that `sim fit` says on stderr what it derived or assumed (the
// profile's fit.notes), also when the profile goes to a file.
func TestSimFitPrintsNotes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fitted.yaml")
	stdout, stderr, code := runCLI("sim", "fit", "--check=false", "-o", out, "../../testdata/reference/glm-5.3-flash-nvfp4-h200nvl-x2.txt")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("with -o the profile goes to the file, stdout got:\n%s", stdout)
	}
	for _, want := range []string{"fit.notes", "KV cache tokens between 2621440", "running ceiling 23", "tokens per decode step assumed 3.00"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if data, err := os.ReadFile(out); err != nil || !strings.Contains(string(data), "running ceiling 23") {
		t.Errorf("the profile file lacks its notes (%v)", err)
	}
}
