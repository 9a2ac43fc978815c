package engine

import (
	"fmt"
	"io"
)

// WriteText writes the build as `speedmatrix engine build` prints it, one "key: value" line each.
func (bd *Build) WriteText(w io.Writer) {
	fmt.Fprintf(w, "engine: %s\n", bd.Engine)
	if bd.Commit != "" {
		fmt.Fprintf(w, "commit: %s\n", bd.Commit)
	}
	fmt.Fprintf(w, "mode: %s\n", bd.Mode)
	if bd.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", bd.Reason)
	}
	if bd.Venv != "" {
		fmt.Fprintf(w, "venv: %s\n", bd.Venv)
	}
	if bd.Image != "" {
		fmt.Fprintf(w, "image: %s\n", bd.Image)
	}
	if bd.Dir != "" {
		fmt.Fprintf(w, "dir: %s\n", bd.Dir)
	}
	if bd.Mode != ModeNone {
		fmt.Fprintf(w, "cached: %v\n", bd.Cached)
	}
}
