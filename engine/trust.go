package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
