package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/internal/cli"
)

// readmeSpeedmatrixYAML does return README.md's ```yaml blocks (indented ones unindented) that
// are a speedmatrix.yaml rather than a workflow, keyed by the line they start on.
func readmeSpeedmatrixYAML(t *testing.T, readme string) map[int]string {
	t.Helper()
	out := map[int]string{}
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimLeft(lines[i], " ")
		if fence != "```yaml" {
			continue
		}
		indent := len(lines[i]) - len(fence)
		start := i + 1
		var block []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := lines[i]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			block = append(block, l)
		}
		doc := strings.Join(block, "\n") + "\n"
		if strings.Contains(doc, "\njobs:") || strings.HasPrefix(doc, "on:") {
			continue
		}
		out[start] = doc
	}
	return out
}

// TestREADMEConfigBlocksRun checks that every speedmatrix.yaml README.md shows, the
// configuration reference's every-key block included, is accepted whole by run's settings (plan
// reads them as run does, without measuring): a user who copies a block, or a line of it, gets
// the matrix it describes, not a usage error.
func TestREADMEConfigBlocksRun(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeSpeedmatrixYAML(t, string(b))
	if len(blocks) < 3 {
		t.Fatalf("found %d speedmatrix.yaml blocks in README.md; the parsing is broken", len(blocks))
	}
	for line, doc := range blocks {
		path := filepath.Join(t.TempDir(), "speedmatrix.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		getenv := func(string) string { return "" }
		if err := cli.Run(context.Background(), []string{"plan", "--config", path, "--shards", "1"}, &stdout, &stderr, getenv); err != nil {
			t.Errorf("README.md:%d: speedmatrix plan --config (the block) --shards 1: %v\n%s", line, err, stderr.String())
		}
	}
}
