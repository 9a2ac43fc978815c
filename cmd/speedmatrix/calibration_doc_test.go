package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/internal/cli"
)

// TestCalibrationDoc checks docs/calibration.md, where the calibration figures live: every
// command of its sh blocks (one per figure row, the commands that regenerate them) is a
// speedmatrix calibrate command whose flags exist, and README.md's short "### Calibration"
// subsection (at most 25 lines) links to it.
func TestCalibrationDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/calibration.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, string(b))
	if len(cmds) < 10 {
		t.Fatalf("docs/calibration.md holds %d commands in sh blocks, want one per figure row", len(cmds))
	}
	for _, c := range cmds {
		args := strings.Fields(c.Src)
		if len(args) < 2 || args[0] != "speedmatrix" || args[1] != "calibrate" {
			t.Errorf("docs/calibration.md:%d %q is not a speedmatrix calibrate command", c.Line, c.Src)
			continue
		}
		var stdout, stderr bytes.Buffer
		if err := cli.Run(context.Background(), append(args[1:], "--help"), &stdout, &stderr, func(string) string { return "" }); err != nil {
			t.Errorf("docs/calibration.md:%d %q: %v\n%s", c.Line, c.Src, err, stderr.String())
		}
	}
	r, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(r), "\n### Calibration\n")
	if !ok {
		t.Fatal(`README.md has no "### Calibration" subsection`)
	}
	if i := strings.Index(sec, "\n#"); i >= 0 {
		sec = sec[:i]
	}
	if n := strings.Count(strings.TrimSpace(sec), "\n") + 1; n > 25 {
		t.Errorf("README.md's Calibration subsection has %d lines, want at most 25 (the figures live in docs/calibration.md)", n)
	}
	if !strings.Contains(sec, "docs/calibration.md") {
		t.Error("README.md's Calibration subsection does not link docs/calibration.md")
	}
	if strings.Contains(string(r), "### Calibration within a GPU budget") {
		t.Error("README.md still holds \"### Calibration within a GPU budget\"; it moved to docs/calibration.md")
	}
}
