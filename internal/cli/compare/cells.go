package compare

import (
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/speedmatrix/speedmatrix/results"
)

// checkAskedCells returns a usage error when none of the cells compare --cells asks for is in
// any of the files: a mistyped list would otherwise compare nothing and exit 0. A list of which
// some cells are present only warns (compare's warnings), as the rerun advice may name cells a
// side lacks.
func checkAskedCells(asked []results.CellID, basePath, headPath string, sides ...[]*results.File) error {
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
	return cmdutil.Usagef("--cells: none of %s is in %s or %s; the files hold %s", strings.Join(names, ","), basePath, headPath, strings.Join(order, ","))
}
