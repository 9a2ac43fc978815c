package store

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// filterText returns the filter flags given to cmd (store list), as typed.
func filterText(cmd *cobra.Command) string {
	var parts []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "config-id", "kind", "commit", "pr":
			parts = append(parts, "--"+f.Name+" "+f.Value.String())
		}
	})
	return strings.Join(parts, " ")
}
