package store

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/speedmatrix/speedmatrix/internal/textout"
)

// WriteReindex says what a reindex of the local store dir did (Dir.Reindex's entries and
// skipped files), as store reindex prints it: each skipped file on w and, as a warning, on log,
// then one line of what was indexed.
func WriteReindex(w io.Writer, log *slog.Logger, dir string, entries []Entry, skipped []error) error {
	kinds := map[Kind]int{}
	for _, e := range entries {
		kinds[e.Kind]++
	}
	for _, sk := range skipped {
		log.Warn(sk.Error())
		var se *SkippedError
		if errors.As(sk, &se) {
			fmt.Fprintf(w, "skipped %s\n", se.Path)
		}
	}
	fmt.Fprintf(w, "indexed %s (%d %s, %d %s, %d %s) in %s; %s skipped\n", textout.Plural(len(entries), "result", "results"),
		kinds[KindDefault], KindDefault, kinds[KindPR], KindPR, kinds[KindAA], KindAA,
		filepath.Join(dir, IndexFile), textout.Plural(len(skipped), "file", "files"))
	return nil
}
