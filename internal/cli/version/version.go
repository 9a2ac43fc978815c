// Package version is `speedmatrix version`.
package version

import (
	"fmt"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"
)

// NewCmd builds `speedmatrix version`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of speedmatrix, from the build information",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(env.Stdout, "speedmatrix", cmdutil.Version())
			return err
		},
	}
}
