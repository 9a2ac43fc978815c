package cli

import "strings"

// storeFlagsText returns the flags that name the store the flags chose, for a command line the
// user can run later.
func (s *storeFlags) storeFlagsText() string {
	var parts []string
	switch {
	case s.dir != "":
		parts = append(parts, "--store "+s.dir)
	case s.branch != "":
		parts = append(parts, "--branch "+s.branch)
		if s.repo != "" {
			parts = append(parts, "--repo "+s.repo)
		}
	}
	if s.configPath != "" {
		parts = append(parts, "--config "+s.configPath)
	}
	return strings.Join(parts, " ")
}
