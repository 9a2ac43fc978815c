package action

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/results"
)

// partialResults returns the results a run that stopped early left (the runner writes the
// cells measured so far, marked partial, when the server dies or the run is cancelled), after
// copying them to the artifact directory; nil when there are none, or when the file is not this
// run's (another commit's, or older than this job).
func (j *job) partialResults(p plan) *results.File {
	path := j.in.Results
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil || fi.ModTime().Before(j.started) {
		return nil
	}
	f, err := results.ReadFile(path)
	if err != nil || f.Engine.Commit != p.HeadSHA || len(f.Decode)+len(f.Prefill) == 0 {
		return nil
	}
	if j.in.ArtifactDir != "" {
		dst := filepath.Join(j.in.ArtifactDir, artifactResults)
		if abs, _ := filepath.Abs(path); abs != dst {
			if err := copyFile(path, dst); err != nil {
				j.log.Warn("copying the partial results to the artifact directory", "err", err)
			}
		}
	}
	return f
}

// measuredCells counts f's cells that were measured (valid or queued).
func measuredCells(f *results.File) int {
	n := 0
	for _, c := range f.Prefill {
		if c.Status.Measured() {
			n++
		}
	}
	for _, c := range f.Decode {
		if c.Status.Measured() {
			n++
		}
	}
	return n
}

// serverExit says how the engine's server ended when cause holds its exit (the first line of
// cause cuts it off): its exit code or signal and the last line of its log; "" otherwise.
func serverExit(cause error) string {
	var pe *engine.ProcessError
	if !errors.As(cause, &pe) || pe.What != "server" {
		return ""
	}
	s := fmt.Sprintf("The %s %s", pe.What, pe.Reason)
	switch {
	case pe.Signal != "":
		s += fmt.Sprintf(" (killed by %s)", pe.Signal)
	case pe.ExitCode >= 0:
		s += fmt.Sprintf(" (exit code %d)", pe.ExitCode)
	}
	if pe.Hint != "" {
		s += "; " + pe.Hint
	}
	for i := len(pe.Tail) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(pe.Tail[i]); line != "" {
			return s + "; the last line of its log: " + code(line) + "."
		}
	}
	return s + "."
}

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
