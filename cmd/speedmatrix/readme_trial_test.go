package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/internal/cli"
)

// readmeSpeedmatrixYAML does return a markdown file's ```yaml blocks (indented ones unindented) that
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

// TestREADMEConfigBlocksRun checks that every speedmatrix.yaml README.md and docs/ show, the
// configuration reference's every-key block included, is accepted whole by run's settings (plan
// reads them as run does, without measuring): a user who copies a block, or a line of it, gets
// the matrix it describes, not a usage error.
func TestREADMEConfigBlocksRun(t *testing.T) {
	n := 0
	for _, d := range userDocs(t) {
		blocks := readmeSpeedmatrixYAML(t, d.Text)
		n += len(blocks)
		checkConfigBlocks(t, d.Path, blocks)
	}
	if n < 3 {
		t.Fatalf("found %d speedmatrix.yaml blocks in README.md and docs/; the parsing is broken", n)
	}
}

// checkConfigBlocks runs `plan --config BLOCK --shards 1` on each block of the file at path.
func checkConfigBlocks(t *testing.T, path string, blocks map[int]string) {
	t.Helper()
	for line, doc := range blocks {
		file := filepath.Join(t.TempDir(), "speedmatrix.yaml")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		getenv := func(string) string { return "" }
		if err := cli.Run(context.Background(), []string{"plan", "--config", file, "--shards", "1"}, &stdout, &stderr, getenv); err != nil {
			t.Errorf("%s:%d: speedmatrix plan --config (the block) --shards 1: %v\n%s", path, line, err, stderr.String())
		}
	}
}

// TestREADMEExitCodes checks that docs/commands.md's exit codes name every command, or command
// and flag, whose --help says it exits 3 on a regression: a CI script written from the docs must
// not take a regression for an error.
func TestREADMEExitCodes(t *testing.T) {
	_, sentence, ok := strings.Cut(readDoc(t, "docs/commands.md"), "Exit codes:")
	if !ok {
		t.Fatal("docs/commands.md has no \"Exit codes:\" sentence")
	}
	sentence, _, _ = strings.Cut(strings.ReplaceAll(sentence, "\n", " "), ". ")
	exit3 := regexp.MustCompile(`(?i)exits? (with status )?3\b|\b3 regression`)
	flagRe := regexp.MustCompile(`^\s+(?:-\w, )?(--[a-z-]+)`)
	found := 0
	for _, c := range subcommands(t) { // readme_ref_test.go
		if c == "plan" {
			continue // plan takes run's flags and measures nothing
		}
		var stdout, stderr bytes.Buffer
		if err := cli.Run(context.Background(), []string{c, "--help"}, &stdout, &stderr, func(string) string { return "" }); err != nil {
			t.Fatalf("speedmatrix %s --help: %v", c, err)
		}
		for _, line := range strings.Split(stdout.String(), "\n") {
			if !exit3.MatchString(line) {
				continue
			}
			want := "`" + c + "`"
			if m := flagRe.FindStringSubmatch(line); m != nil {
				want = "`" + c + " " + m[1] + "`"
			}
			found++
			if !strings.Contains(sentence, want) {
				t.Errorf("speedmatrix %s --help says it exits 3 (%q), but docs/commands.md's exit codes (%q) do not name %s", c, strings.TrimSpace(line), strings.TrimSpace(sentence), want)
			}
		}
	}
	if found < 2 {
		t.Fatalf("found %d help lines about exit status 3; the parsing is broken", found)
	}
}
