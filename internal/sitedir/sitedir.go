package sitedir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// Write writes every file of site (a slash-separated path relative to dir → its contents) under
// dir, creating folders as needed, each file atomically. A path that is absolute or climbs out of
// dir is refused.
func Write(dir string, site map[string][]byte) error {
	names := make([]string, 0, len(site))
	for name := range site {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		rel := filepath.FromSlash(name)
		if !filepath.IsLocal(rel) || strings.Contains(name, `\`) {
			return fmt.Errorf("site file %q is not a path inside the site", name)
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := results.WriteFileAtomic(p, site[name]); err != nil {
			return err
		}
	}
	return nil
}
