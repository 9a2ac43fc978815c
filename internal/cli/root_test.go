package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
