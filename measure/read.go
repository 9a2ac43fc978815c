package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/usage"
	"github.com/speedmatrix/speedmatrix/results"
)

// ReadSide reads one side's comma-separated results files.
func ReadSide(arg string) ([]*results.File, error) {
	var fs []*results.File
	for _, p := range strings.Split(arg, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		f, err := results.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("cannot compare: %w", err)
		}
		fs = append(fs, f)
	}
	if len(fs) == 0 {
		return nil, settingsf("no results file in %q", arg)
	}
	return fs, nil
}

// ReadHistory reads every *.json results file in dir, in name order; files that are not valid
// results files are skipped with a warning.
func ReadHistory(dir string) ([]*results.File, []string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("--history: %w", err)
	}
	sort.Strings(matches)
	var fs []*results.File
	var warnings []string
	for _, p := range matches {
		f, err := results.ReadFile(p)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("history file skipped: %v", err))
			continue
		}
		fs = append(fs, f)
	}
	if len(fs) == 0 {
		warnings = append(warnings, fmt.Sprintf("--history %s holds no readable results file; the prior was used", dir))
	}
	return fs, warnings, nil
}

// CheckAskedCells returns a usage error when none of the cells compare --cells asks for is in
// any of the files: a mistyped list would otherwise compare nothing and exit 0. A list of which
// some cells are present only warns (compare's warnings), as the rerun advice may name cells a
// side lacks.
func CheckAskedCells(asked []results.CellID, basePath, headPath string, sides ...[]*results.File) error {
	if len(asked) == 0 {
		return nil
	}
	held := map[results.CellID]bool{}
	var order []string
	add := func(id results.CellID) {
		if !held[id] {
			held[id] = true
			order = append(order, id.String())
		}
	}
	for _, fs := range sides {
		for _, f := range fs {
			for i := range f.Prefill {
				add(f.Prefill[i].ID())
			}
			for i := range f.Decode {
				add(f.Decode[i].ID())
			}
		}
	}
	var names []string
	for _, id := range asked {
		if held[id] {
			return nil
		}
		names = append(names, id.String())
	}
	return usage.Errorf("--cells: none of %s is in %s or %s; the files hold %s", strings.Join(names, ","), basePath, headPath, strings.Join(order, ","))
}
