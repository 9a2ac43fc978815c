package main

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/speedmatrix/speedmatrix/internal/cli"
	"github.com/speedmatrix/speedmatrix/report"
)

// subcommands does return the names under "Available Commands:" of `speedmatrix ARGS --help`,
// less help.
func subcommands(t *testing.T, args ...string) []string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := cli.Run(context.Background(), append(args, "--help"), &stdout, &stderr, func(string) string { return "" }); err != nil {
		t.Fatalf("speedmatrix %s --help: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	_, list, ok := strings.Cut(stdout.String(), "Available Commands:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		if name := strings.Fields(line)[0]; name != "help" && name != "completion" {
			out = append(out, name)
		}
	}
	return out
}

// TestREADMECommandsTable checks that docs/commands.md's command table has a row for every
// command of `speedmatrix --help`, and that each row names the command's own subcommands (engine
// build, store list, sim fit, …), so that every command a user can run is findable in the docs.
func TestREADMECommandsTable(t *testing.T) {
	_, table, ok := strings.Cut(readDoc(t, "docs/commands.md"), "| command | what it does |")
	if !ok {
		t.Fatal("docs/commands.md has no command table (| command | what it does |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := map[string]string{}
	rowRe := regexp.MustCompile("(?m)^\\| `speedmatrix ([a-z]+)([^`]*)` \\|(.*)$")
	for _, m := range rowRe.FindAllStringSubmatch(table, -1) {
		rows[m[1]] += m[2] + m[3]
	}
	top := subcommands(t)
	if len(top) < 10 {
		t.Fatalf("speedmatrix --help lists %d commands; the parsing is broken", len(top))
	}
	for _, c := range top {
		row, ok := rows[c]
		if !ok {
			t.Errorf("docs/commands.md's command table has no row for `speedmatrix %s`", c)
			continue
		}
		for _, sub := range subcommands(t, c) {
			if !regexp.MustCompile(`\b` + sub + `\b`).MatchString(row) {
				t.Errorf("docs/commands.md's row for `speedmatrix %s` does not name its subcommand %s", c, sub)
			}
		}
	}
}

// excerptMarker precedes, in README.md, the excerpt of the checked-in example comment.
const excerptMarker = "<!-- excerpt of docs/example/comment.md (TestREADMEExcerpt) -->"

// TestREADMEExcerpt checks that the comment README.md shows under its marker is the checked-in
// example's (docs/example/comment.md, which TestDemoExampleCurrent keeps current): every line
// of the quote, in order, is a line of the example, so the README shows what the bot writes and
// not a copy that drifts from it. After `speedmatrix demo --dir docs/example`, copy the lines anew.
func TestREADMEExcerpt(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("../../docs/example/comment.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), excerptMarker+"\n")
	if !ok {
		t.Fatalf("README.md has no %s followed by the quoted excerpt", excerptMarker)
	}
	var quote []string
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, ">") {
			break
		}
		if s := strings.TrimPrefix(strings.TrimPrefix(line, ">"), " "); s != "" {
			quote = append(quote, s)
		}
	}
	if len(quote) < 3 {
		t.Fatalf("the excerpt after %s has %d lines; quote at least the verdict line and a table", excerptMarker, len(quote))
	}
	lines := strings.Split(string(example), "\n")
	i := 0
	for _, q := range quote {
		for i < len(lines) && lines[i] != q {
			i++
		}
		if i == len(lines) {
			t.Errorf("README.md's excerpt line %q is not a line of docs/example/comment.md (in order): copy it from the regenerated example", q)
			return
		}
		i++
	}
}

// githubAnchor does return the fragment GitHub gives a heading: lower case, punctuation other
// than - and _ dropped, spaces as hyphens.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// readmeAnchors does return the anchors of a markdown file's headings (outside code blocks).
func readmeAnchors(readme string) map[string]bool {
	out := map[string]bool{}
	inBlock := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock && strings.HasPrefix(line, "#") {
			out[githubAnchor(strings.TrimLeft(line, "#"))] = true
		}
	}
	return out
}

// TestREADMEAnchors checks every relative link of README.md and docs/*.md: a file it names
// exists, and a #fragment (in the same file or another of them) lands on a heading there; and
// the link every PR comment carries to "How to read the comment" (report.ReadmeURL) lands on a
// heading of README.md, so that moving text between the files breaks no link.
func TestREADMEAnchors(t *testing.T) {
	docs := userDocs(t)
	anchors := map[string]map[string]bool{}
	for _, d := range docs {
		anchors[d.Path] = readmeAnchors(d.Text)
	}
	if !anchors["README.md"]["quick-start-for-a-gpu-repository"] || !anchors["docs/paired.md"]["paired-ab"] {
		t.Fatalf("heading anchors %v: the slugs are wrong", anchors["README.md"])
	}
	linkRe := regexp.MustCompile(`\]\(([^)\s]*)\)`)
	checked := 0
	for _, d := range docs {
		for _, m := range linkRe.FindAllStringSubmatch(d.Text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			to := d.Path
			if file != "" {
				to = path.Clean(path.Join(path.Dir(d.Path), file))
				if _, err := os.Stat(filepath.Join("../..", to)); err != nil {
					t.Errorf("%s links %s: %s does not exist", d.Path, target, to)
					continue
				}
			}
			checked++
			if frag == "" {
				continue
			}
			a, ok := anchors[to]
			if !ok {
				t.Errorf("%s links %s: a fragment of a file that is not README.md or docs/*.md", d.Path, target)
			} else if !a[frag] {
				t.Errorf("%s links %s, which no heading of %s has", d.Path, target, to)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d links; the parsing is broken", checked)
	}
	_, frag, _ := strings.Cut(report.ReadmeURL, "#")
	if !anchors["README.md"][frag] {
		t.Errorf("report.ReadmeURL, in every PR comment, links #%s, which no heading of README.md has", frag)
	}
}
