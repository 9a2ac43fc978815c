package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Trust is the trust level of the job that builds: which code may have run on the machine.
type Trust string

// The trust levels. A job of TrustTrusted (a push to the default branch) never reads what a
// job of TrustUntrusted (any run of a pull request's code) wrote: each level has its own
// environments, ccache and image tags. An untrusted job does not read the trusted cache either:
// its code runs as the same user, so whatever it reads it could also write. TrustLocal (empty)
// is speedmatrix run outside the action: the cache directory as given.
const (
	TrustLocal     Trust = ""
	TrustTrusted   Trust = "trusted"
	TrustUntrusted Trust = "untrusted"
)

// ParseTrust checks a trust level's name.
func ParseTrust(s string) (Trust, error) {
	switch t := Trust(s); t {
	case TrustLocal, TrustTrusted, TrustUntrusted:
		return t, nil
	}
	return "", fmt.Errorf("trust %q: want trusted, untrusted or empty", s)
}

// UntrustedMarker is the file an untrusted measurement leaves in the runner's tool directory
// (RUNNER_TOOL_CACHE), outside every sandbox: the machine has run a pull request's code.
const UntrustedMarker = "speedmatrix-untrusted-code-ran"

// EphemeralVar is the variable with which a runner says it is ephemeral (one job per machine,
// nothing kept): set to true in the runner's .env file (or the runner's environment), never by
// a workflow of a pull request, which cannot reach a GPU runner (security.md).
const EphemeralVar = "SPEEDMATRIX_EPHEMERAL_RUNNER"

// MarkUntrusted leaves UntrustedMarker in toolDir (nothing when toolDir is empty: outside a
// runner), before an untrusted build.
func MarkUntrusted(toolDir string) error {
	if toolDir == "" {
		return nil
	}
	if err := os.MkdirAll(toolDir, 0o755); err != nil {
		return fmt.Errorf("untrusted-code marker: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(toolDir, UntrustedMarker), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("untrusted-code marker: %w", err)
	}
	return f.Close()
}

// CheckTrustedRunner refuses a trusted measurement on a runner whose toolDir holds
// UntrustedMarker (it ran a pull request's code, whose leftovers a trusted job must not read)
// unless the runner says it is ephemeral.
func CheckTrustedRunner(toolDir string, ephemeral bool) error {
	if toolDir == "" || ephemeral {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(toolDir, UntrustedMarker)); err == nil {
		return fmt.Errorf("trusted measurement refused: this runner measured a pull request's code before (%s exists), and what that code left on a persistent runner could steer this run; "+
			"give trusted jobs (push, bisect) their own runners (a runner label of their own), or use ephemeral runners and set %s=true in the runner's .env file", filepath.Join(toolDir, UntrustedMarker), EphemeralVar)
	}
	return nil
}

// treeHash returns the SHA-256 of the environment at dir, its marker and last-used file
// aside: every path in lexical order with its type, mode bits and content (a link's target).
// A trusted job records it in the marker and checks it before a reuse, so that an environment
// changed after its build (a .pth file dropped into its venv) is rebuilt, not served.
func treeHash(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == markerName || rel == "last-used" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%q %s\n", filepath.ToSlash(rel), info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "-> %q\n", target)
		case info.Mode().IsRegular():
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			fmt.Fprintln(h)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
