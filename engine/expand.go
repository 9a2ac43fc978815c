package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Expander looks up the value of ${NAME}; ok is false when NAME is not defined.
type Expander func(name string) (value string, ok bool)

// expand replaces every ${NAME} in s through lookup. An undefined name is an error that names
// it; "$$" stands for a literal "$"; a "$" not followed by "{" or "$" is kept.
func expand(s string, lookup Expander) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("%q: unclosed ${ (write $$ for a literal $)", s)
			}
			name := s[i+2 : i+2+end]
			if name == "" {
				return "", fmt.Errorf("%q: empty ${} (write $$ for a literal $)", s)
			}
			v, ok := lookup(name)
			if !ok {
				return "", fmt.Errorf("%q: ${%s} is not set; export %s or remove it from the command", s, name, name)
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func sortStrings(s []string) { slices.Sort(s) }
