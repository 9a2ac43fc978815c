package config

import (
	"fmt"
	"slices"

	"github.com/speedmatrix/speedmatrix/internal/envexpand"
)

// Expand replaces each ${NAME} in s by lookup(NAME) and each $$ by $; any other $ is kept.
// An unset variable is an error naming it (a set but empty one expands to ""), as is a ${ with
// no } or a name that is not [A-Za-z_][A-Za-z0-9_]*. The error never holds a value.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	return envexpand.Expand(s, lookup)
}

// IsEnvName reports whether s is a valid environment variable name: [A-Za-z_][A-Za-z0-9_]*.
func IsEnvName(s string) bool { return envexpand.IsName(s) }

// Expanded returns the launch command and environment with ${NAME} expanded by lookup (the
// caller's environment plus PORT). Its result holds secrets: use it to start the process,
// never to print. Errors name the setting (engine.serve.command[3]) but no value.
func (s Serve) Expanded(lookup func(string) (string, bool)) (Serve, error) {
	out := s
	out.Command = make([]string, len(s.Command))
	for i, a := range s.Command {
		v, err := Expand(a, lookup)
		if err != nil {
			return Serve{}, fmt.Errorf("engine.serve.command[%d]: %w", i, err)
		}
		out.Command[i] = v
	}
	if s.Env != nil {
		out.Env = make(map[string]string, len(s.Env))
		for k, a := range s.Env {
			v, err := Expand(a, lookup)
			if err != nil {
				return Serve{}, fmt.Errorf("engine.serve.env.%s: %w", k, err)
			}
			out.Env[k] = v
		}
	}
	return out, nil
}

// References returns the names of the variables that s's command and environment expand
// (${NAME}), sorted and without repeats: whatever they hold is to be redacted from output.
func (s Serve) References() []string {
	seen := map[string]bool{}
	var names []string
	record := func(v string) (string, bool) {
		if !seen[v] {
			seen[v] = true
			names = append(names, v)
		}
		return "", true
	}
	for _, a := range s.Command {
		_, _ = Expand(a, record)
	}
	for _, a := range s.Env {
		_, _ = Expand(a, record)
	}
	slices.Sort(names)
	return names
}
