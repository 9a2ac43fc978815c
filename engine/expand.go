package engine

import (
	"slices"

	"github.com/speedmatrix/speedmatrix/internal/envexpand"
)

// Expander looks up the value of ${NAME}; ok is false when NAME is not defined.
type Expander func(name string) (value string, ok bool)

// expand replaces every ${NAME} in s through lookup (envexpand.Expand): an undefined name is
// an error that names it; "$$" stands for a literal "$"; any other "$" is kept.
func expand(s string, lookup Expander) (string, error) {
	return envexpand.Expand(s, lookup)
}

func sortStrings(s []string) { slices.Sort(s) }
