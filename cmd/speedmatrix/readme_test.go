package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/speedmatrix/speedmatrix/internal/cli"
	"github.com/speedmatrix/speedmatrix/internal/memnet"
)

// readmeCommand is one command of README.md or docs/ a user is told to paste.
type readmeCommand struct {
	Line     int // in its file
	Src      string
	Stmt     *syntax.Stmt
	WantExit int // from a trailing "# … exit status N" comment; 0 without one
}

// readmeCommands does parse every ```sh block of a markdown file (README.md or one of docs/) as
// shell and returns its commands; it fails the test on a block that does not parse.
func readmeCommands(t *testing.T, readme string) []readmeCommand {
	t.Helper()
	var out []readmeCommand
	lines := strings.Split(readme, "\n")
	exitRe := regexp.MustCompile(`exit(?: status|s) (\d+)`)
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```sh" {
			continue
		}
		start := i + 1
		var block []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			block = append(block, lines[i])
		}
		src := strings.Join(block, "\n") + "\n"
		f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), "README.md")
		if err != nil {
			t.Errorf("README.md line %d: the sh block does not parse as shell: %v", start, err)
			continue
		}
		for _, st := range f.Stmts {
			c := readmeCommand{Line: start + int(st.Pos().Line()) - 1, Src: block[st.Pos().Line()-1], Stmt: st}
			for _, cm := range st.Comments {
				if m := exitRe.FindStringSubmatch(cm.Text); m != nil && cm.Pos().Line() >= st.Pos().Line() {
					c.WantExit, _ = strconv.Atoi(m[1])
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// shellSurprises does return what in st a shell would not pass on as the words written: a
// redirect (an unquoted > or <, e.g. ctx>=32K), a pipe or list, a background job, or an
// unquoted glob character.
func shellSurprises(st *syntax.Stmt) []string {
	var out []string
	for _, r := range st.Redirs {
		out = append(out, "redirect "+r.Op.String()+" (quote the word that holds it)")
	}
	if st.Background || st.Negated || st.Coprocess {
		out = append(out, "a background job or negation")
	}
	var words []*syntax.Word
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		words = c.Args
		for _, a := range c.Assigns {
			if a.Value != nil {
				words = append(words, a.Value)
			}
		}
	case *syntax.DeclClause:
		for _, a := range c.Args {
			if a.Value != nil {
				words = append(words, a.Value)
			}
		}
	default:
		out = append(out, "not a simple command (a pipe, list or compound command)")
	}
	for _, w := range words {
		for _, p := range w.Parts {
			if lit, ok := p.(*syntax.Lit); ok && strings.ContainsAny(lit.Value, "*?[]{}!") {
				out = append(out, "unquoted glob or history character in "+strconv.Quote(lit.Value))
			}
		}
	}
	return out
}

// inlineCommands does return the inline code spans of README.md's prose that hold a command or
// its flags (they start with speedmatrix, go or --): users paste those too.
func inlineCommands(readme string) []string {
	var out []string
	inBlock := false
	span := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			s := m[1]
			if strings.Contains(s, " [-") {
				continue // a synopsis such as speedmatrix run [--url URL], not a command
			}
			if strings.HasPrefix(s, "speedmatrix ") || strings.HasPrefix(s, "go ") || strings.HasPrefix(s, "--") {
				out = append(out, s)
			}
		}
	}
	return out
}

// pastedProgram reports whether a command runs this program (speedmatrix, a built
// ./speedmatrix, or go): those are checked for shell surprises; other tools' commands in docs/
// (git, sha256sum, a release script) are the maintainers' and may chain with &&.
func pastedProgram(st *syntax.Stmt) bool {
	for b, ok := st.Cmd.(*syntax.BinaryCmd); ok; b, ok = st.Cmd.(*syntax.BinaryCmd) {
		st = b.X // a list: its first command says whose it is
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return true // a pipe or list: shellSurprises says so
	}
	w := call.Args[0].Lit()
	return w == "speedmatrix" || w == "./speedmatrix" || w == "go"
}

// TestREADMECommands checks every command README.md and docs/ tell a user to paste: each
// parses as shell with no redirect or unquoted metacharacter surprise (the unquoted
// decode=1.10@ctx>=32K once wrote a file named =32K); every speedmatrix command's flags exist
// (run with --help); and the demos run and exit as the text says (skipped with -short).
func TestREADMECommands(t *testing.T) {
	var demo time.Duration // the bare demo's, in the simulator's time
	total := 0
	for _, d := range userDocs(t) {
		t.Run(d.Path, func(t *testing.T) {
			n, took := checkDocCommands(t, d)
			total += n
			demo = max(demo, took)
		})
	}
	if total < 10 {
		t.Fatalf("found %d commands in the sh blocks of README.md and docs/; the extraction is broken", total)
	}
	if !testing.Short() {
		if demo == 0 {
			t.Fatal("no bare demo command (go run ./cmd/speedmatrix demo) found in README.md's sh blocks")
		}
		checkDemoTime(t, demo) // readme_screen_test.go
	}
}

// checkDocCommands checks the commands of one markdown file, as TestREADMECommands says, and
// returns how many its sh blocks hold and how long the bare demo (no flags) took in the
// simulator's time, 0 when none ran.
func checkDocCommands(t *testing.T, d userDoc) (n int, demoTook time.Duration) {
	for _, s := range inlineCommands(d.Text) {
		src := s
		if strings.HasPrefix(s, "--") {
			src = "speedmatrix " + s
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
		if err != nil {
			t.Errorf("%s inline `%s` does not parse as shell: %v", d.Path, s, err)
			continue
		}
		for _, st := range f.Stmts {
			for _, why := range shellSurprises(st) {
				t.Errorf("%s inline `%s`: %s", d.Path, s, why)
			}
		}
	}
	cmds := readmeCommands(t, d.Text)
	cfg := &expand.Config{
		Env: expand.ListEnviron("VLLM_KEY=k"),
		CmdSubst: func(w io.Writer, _ *syntax.CmdSubst) error {
			_, err := io.WriteString(w, "vllm serve m --api-key k")
			return err
		},
	}
	ran := map[string]int{} // demo arguments already run → the exit status wanted
	for _, c := range cmds {
		if pastedProgram(c.Stmt) {
			for _, why := range shellSurprises(c.Stmt) {
				t.Errorf("%s:%d %q: %s", d.Path, c.Line, c.Src, why)
			}
		}
		call, ok := c.Stmt.Cmd.(*syntax.CallExpr)
		if !ok {
			continue
		}
		fields, err := expand.Fields(cfg, call.Args...)
		if err != nil {
			t.Errorf("%s:%d %q: %v", d.Path, c.Line, c.Src, err)
			continue
		}
		var args []string
		switch {
		case len(fields) > 0 && (fields[0] == "speedmatrix" || fields[0] == "./speedmatrix"):
			args = fields[1:]
		case len(fields) > 2 && fields[0] == "go" && fields[1] == "run" && fields[2] == "./cmd/speedmatrix":
			args = fields[3:]
		default:
			continue // go test, export, git
		}
		if len(args) > 0 && args[0] == "demo" {
			key := strings.Join(args, " ")
			if w, ok := ran[key]; ok {
				if w != c.WantExit {
					t.Errorf("%s:%d: speedmatrix %s is said to exit %d here and %d before", d.Path, c.Line, key, c.WantExit, w)
				}
				continue // the same demo (go run, then a built binary): measured once
			}
			ran[key] = c.WantExit
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			getenv := func(string) string { return "" }
			want := 0
			var err error
			if len(args) > 0 && args[0] == "demo" {
				if testing.Short() {
					t.Skip("a demo measures 11 quick matrices (about 5 s of CPU in the simulator's time)")
				}
				want = c.WantExit
				bare := len(args) == 1
				args = append(args, "--quiet", "--dir", t.TempDir())
				// In the simulator's time (as simtime in the scripts: a fake clock that only the
				// simulator's model moves), so that what the demo measures, and so its verdict,
				// does not depend on how loaded the machine is.
				synctest.Test(t, func(t *testing.T) {
					env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: getenv, Net: memnet.New()}
					began := time.Now()
					err = cli.RunEnv(t.Context(), env, args)
					if bare {
						demoTook = time.Since(began)
					}
				})
			} else {
				args = append(args, "--help") // checks the flags without a server
				err = cli.Run(context.Background(), args, &stdout, &stderr, getenv)
			}
			if got := cli.ExitCode(err); got != want {
				t.Errorf("%s:%d speedmatrix %s: exit %d (%v), want %d\n%s", d.Path, c.Line, strings.Join(args, " "), got, err, want, stderr.String())
			}
		})
	}
	return len(cmds), demoTook
}

// TestNoReferenceOutsideRepository checks that no file of the repository names a path outside
// it (the shared folder of the machine it was written on): users have only the repository.
func TestNoReferenceOutsideRepository(t *testing.T) {
	bad := []string{"../" + "shared", "/work/" + "shared"}
	files, err := repositoryFiles("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range bad {
			if i := bytes.Index(b, []byte(s)); i >= 0 {
				line := bytes.Count(b[:i], []byte("\n")) + 1
				t.Errorf("%s:%d names %q, outside the repository; copy what it needs into testdata/ or cite a file of the repository", path, line, s)
			}
		}
	}
}

// repositoryFiles returns the regular files of the repository at root: those git tracks and the
// untracked ones it does not ignore (not the ignored outputs of the tiers, such as tmp/realvllm's
// engine builds and virtual environments), or, where root is no git checkout, every regular file
// outside .git and tmp.
func repositoryFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			path := filepath.Join(root, name)
			if fi, err := os.Lstat(path); name != "" && err == nil && fi.Mode().IsRegular() {
				files = append(files, path)
			}
		}
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == ".git" || d.Name() == "tmp") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

// TestRepositoryFiles checks that the files TestNoReferenceOutsideRepository reads leave out what
// git ignores: after the real-vLLM tier, tmp/realvllm holds virtual environments whose lib64 is
// a link to a directory, and reading it failed the test.
func TestRepositoryFiles(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "--quiet")
	for name, data := range map[string]string{".gitignore": "/tmp/\n", "a.go": "package a\n", "docs/b.md": "b\n", "tmp/venv/lib/x.py": "x\n"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("lib", filepath.Join(root, "tmp", "venv", "lib64")); err != nil {
		t.Fatal(err)
	}
	git("add", ".gitignore", "a.go")
	files, err := repositoryFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		got = append(got, rel)
	}
	slices.Sort(got)
	if want := []string{".gitignore", "a.go", "docs/b.md"}; !slices.Equal(got, want) {
		t.Errorf("repositoryFiles = %q, want %q (tracked and untracked, not ignored)", got, want)
	}
}
