package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareConfig: compare --config applies the configuration's compare section as the bot
// does: thresholds of 25 % hide the 15 % slowdown that the defaults call a regression, a flag on
// the command line wins over the file, and a file that cannot be read is a usage error that
// says "--config:" before the reason.
func TestCompareConfig(t *testing.T) {
	dir, bp, hp := compareFiles(t, 0.85, "")
	hist := filepath.Join(dir, "base-history")
	cfg := filepath.Join(dir, "speedmatrix.yaml")
	yaml := "compare:\n  thresholds: {prompt_tok_per_s: 0.25, total_tok_per_s: 0.25, per_request_tok_per_s: 0.25, ttft_ms: 0.25, tbt_ms: 0.25}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI("compare", "--history", hist, bp, hp); code != ExitRegression {
		t.Fatalf("without --config: exit %d, want %d (the control)", code, ExitRegression)
	}
	if out, errOut, code := runCLI("compare", "--config", cfg, "--history", hist, bp, hp); code != ExitOK {
		t.Errorf("--config with δ 25 %%: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	// The command line wins: δ back at 3 % for throughput and latency.
	if _, _, code := runCLI("compare", "--config", cfg, "--threshold", "throughput=3", "--threshold", "latency=5", "--history", hist, bp, hp); code != ExitRegression {
		t.Errorf("--config and --threshold: exit %d, want %d", code, ExitRegression)
	}
	_, errOut, code := runCLI("compare", "--config", filepath.Join(dir, "nothere.yaml"), bp, hp)
	if code != ExitUsage || !strings.Contains(errOut, "--config: ") {
		t.Errorf("a missing --config: exit %d, %q; want %d and \"--config: <why>\"", code, errOut, ExitUsage)
	}
}

// TestConfigFileMissing: every command's --config names the flag, a colon, then what went
// wrong ("--config: read the configuration: open …"), never "--config read …".
func TestConfigFileMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothere.yaml")
	for _, args := range [][]string{
		{"run", "--config", missing},
		{"plan", "--shards", "1", "--config", missing},
		{"store", "list", "--config", missing},
		{"compare", "--config", missing, missing, missing},
		{"validate", "--config", missing},
	} {
		_, errOut, code := runCLI(args...)
		if code != ExitUsage || !strings.Contains(errOut, "--config: read the configuration: open "+missing) {
			t.Errorf("%v: exit %d, %q; want %d and \"--config: read the configuration: open …\"", args, code, errOut, ExitUsage)
		}
	}
}
