package cli

import "github.com/spf13/pflag"

// ifChanged returns set(name, apply), which runs apply when the flag name was given on the
// command line: how run's flags override the configuration file's settings, one line a flag.
func ifChanged(fs *pflag.FlagSet) func(name string, apply func()) {
	return func(name string, apply func()) {
		if fs.Changed(name) {
			apply()
		}
	}
}
