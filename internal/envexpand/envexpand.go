package envexpand

import (
	"fmt"
	"strings"
)

// Expand replaces each ${NAME} in s by lookup(NAME) and each $$ by $; any other $ is kept.
// An unset variable is an error naming it (a set but empty one expands to ""), as is a ${ with
// no } or a name that is not [A-Za-z_][A-Za-z0-9_]*. The error never holds a value.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
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
				return "", fmt.Errorf("%q: ${ without a closing } (write $$ for a literal $)", s)
			}
			name := s[i+2 : i+2+end]
			if !IsName(name) {
				return "", fmt.Errorf("${%s}: not a variable name (letters, digits and _, not starting with a digit; write $$ for a literal $)", name)
			}
			v, ok := lookup(name)
			if !ok {
				return "", fmt.Errorf("${%s}: the variable is not set; export it before starting the server", name)
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// IsName reports whether s is a valid environment variable name: [A-Za-z_][A-Za-z0-9_]*.
func IsName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
