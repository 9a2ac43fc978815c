package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Git is what the builder needs of git: the commit to build, its merge-base with the main
// line, the files the change touches, a file at a commit, and a private checkout of the
// commit. GitCLI is the real one; tests use it on repositories they create.
type Git interface {
	// Rev resolves rev (HEAD, a branch, a short hash) in the repository at dir to a full hash.
	Rev(ctx context.Context, dir, rev string) (string, error)
	// MergeBase returns the best common ancestor of a and b.
	MergeBase(ctx context.Context, dir, a, b string) (string, error)
	// ChangedFiles lists the paths that differ between commits from and to.
	ChangedFiles(ctx context.Context, dir, from, to string) ([]string, error)
	// Show returns the content of path at commit rev; ok is false when it does not exist there.
	Show(ctx context.Context, dir, rev, path string) (data []byte, ok bool, err error)
	// Dirty reports whether the working tree at dir has uncommitted changes to tracked files.
	Dirty(ctx context.Context, dir string) (bool, error)
	// Checkout makes dst a checkout of commit, independent of src's working tree.
	Checkout(ctx context.Context, src, dst, commit string) error
}

// GitCLI runs the git binary (Path, or git on PATH).
type GitCLI struct{ Path string }

func (g GitCLI) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	bin := g.Path
	if bin == "" {
		bin = "git"
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("git %s (in %s): %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Rev implements Git.
func (g GitCLI) Rev(ctx context.Context, dir, rev string) (string, error) {
	out, err := g.run(ctx, dir, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// MergeBase implements Git.
func (g GitCLI) MergeBase(ctx context.Context, dir, a, b string) (string, error) {
	out, err := g.run(ctx, dir, "merge-base", a, b)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// ChangedFiles implements Git.
func (g GitCLI) ChangedFiles(ctx context.Context, dir, from, to string) ([]string, error) {
	out, err := g.run(ctx, dir, "diff", "--name-only", "--no-renames", "-z", from, to)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// Show implements Git.
func (g GitCLI) Show(ctx context.Context, dir, rev, path string) ([]byte, bool, error) {
	if _, err := g.run(ctx, dir, "cat-file", "-e", rev+":"+path); err != nil {
		return nil, false, nil
	}
	out, err := g.run(ctx, dir, "show", rev+":"+path)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// Dirty implements Git.
func (g GitCLI) Dirty(ctx context.Context, dir string) (bool, error) {
	out, err := g.run(ctx, dir, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return false, err
	}
	return len(bytes.TrimSpace(out)) > 0, nil
}

// Checkout implements Git with a local clone (objects hard-linked, so cheap, and independent
// of src afterwards) checked out at commit, detached. Tags come along, so version detection
// (setuptools-scm) works in the copy.
func (g GitCLI) Checkout(ctx context.Context, src, dst, commit string) error {
	if _, err := g.run(ctx, "", "clone", "--quiet", "--local", "--no-checkout", src, dst); err != nil {
		return err
	}
	_, err := g.run(ctx, dst, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit)
	return err
}

// ErrNotPinned is a checkout whose HEAD is not the commit the run was pinned to.
var ErrNotPinned = errors.New("the engine's checkout is not at the pinned commit")

// CheckPinned returns an error wrapping ErrNotPinned unless HEAD of the checkout at dir is the
// full commit id pinned: the results record the pinned commit, so what is built and served
// must be it. It runs before anything is built, so no GPU time is spent on the wrong commit.
func CheckPinned(ctx context.Context, git Git, dir, pinned string) error {
	if git == nil {
		git = GitCLI{}
	}
	head, err := git.Rev(ctx, dir, "HEAD")
	if err != nil {
		return fmt.Errorf("%w: %w; is %s a git checkout of the engine?", ErrNotPinned, err, dir)
	}
	if !strings.EqualFold(head, pinned) {
		return fmt.Errorf("%w: HEAD of %s is %s, the run is pinned to %s; check out the pinned commit (git -C %s checkout %s) or pin the commit checked out", ErrNotPinned, dir, head, pinned, dir, pinned)
	}
	return nil
}
