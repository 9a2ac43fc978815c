package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"version"}, ExitOK},
		{[]string{"frobnicate"}, ExitUsage},
		{[]string{"report", "--no-such-flag", "x.json"}, ExitUsage},
		{[]string{"report"}, ExitUsage},
		{[]string{"report", "--format", "pdf", "x.json"}, ExitUsage},
		{[]string{"--log-level", "loud", "version"}, ExitUsage},
		{[]string{"report", "does-not-exist.json"}, ExitError},
		{[]string{"import", "does-not-exist.txt"}, ExitError},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		err := Run(context.Background(), tt.args, &out, &errOut, func(string) string { return "" })
		if got := ExitCode(err); got != tt.want {
			t.Errorf("speedmatrix %v: exit %d (err %v), want %d", tt.args, got, err, tt.want)
		}
	}
	if got := ExitCode(fmt.Errorf("compare: %w", ErrRegression)); got != ExitRegression {
		t.Errorf("a wrapped ErrRegression exits %d, want %d", got, ExitRegression)
	}
	if !Quiet(ErrRegression) || Quiet(errors.New("x")) {
		t.Error("Quiet must hold for ErrRegression only")
	}
}

// TestFlagMistake: a mistyped flag is one line on stderr: the error first, the flag meant, and
// where the flags are listed; never the usage (57 lines of it once, with the error below them).
func TestFlagMistake(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; "" for no suggestion
	}{
		{[]string{"run", "--duraton", "5s"}, "unknown flag: --duraton; did you mean --duration? (speedmatrix run --help lists the flags)"},
		{[]string{"compare", "--treshold", "x=1", "a", "b"}, "did you mean --threshold?"},
		{[]string{"store", "list", "--stor", "d"}, "did you mean --store?"},
		{[]string{"run", "--log-levle", "debug"}, "did you mean --log-level?"},
		{[]string{"run", "--zzzzzz"}, ""},
		{[]string{"report"}, "accepts 1 arg(s), received 0; usage: speedmatrix report [--format markdown|json|csv] RESULTS"},
	} {
		var out, errOut bytes.Buffer
		err := Run(context.Background(), tc.args, &out, &errOut, func(string) string { return "" })
		if ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit %d (%v), want %d", tc.args, ExitCode(err), err, ExitUsage)
			continue
		}
		if strings.Contains(errOut.String(), "Usage:") || strings.Contains(errOut.String(), "Flags:") {
			t.Errorf("%v printed the usage on a mistake:\n%s", tc.args, errOut.String())
		}
		msg := err.Error()
		if tc.want == "" && strings.Contains(msg, "did you mean") {
			t.Errorf("%v: %q suggests a flag that is nothing like the one typed", tc.args, msg)
		}
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "--help lists the flags") {
			t.Errorf("%v: %q, want it to hold %q and where the flags are listed", tc.args, msg, tc.want)
		}
	}
	// --help still prints the usage, on stdout.
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), []string{"run", "--help"}, &out, &errOut, func(string) string { return "" }); err != nil || !strings.Contains(out.String(), "Flags:") {
		t.Errorf("run --help: %v\n%s", err, out.String())
	}
}
