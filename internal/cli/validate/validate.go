// Package validate is `speedmatrix validate`: --config, then action.Validate.
package validate

import (
	"fmt"
	"os"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/action"
	"github.com/speedmatrix/speedmatrix/measure"
)

// NewCmd builds `speedmatrix validate`: the configuration checked as run, plan and the
// bot read it, without measuring anything.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "validate [--config speedmatrix.yaml]",
		Short: "Check speedmatrix.yaml as run, plan and the bot read it, before any GPU time is spent",
		Long: `validate reads speedmatrix.yaml strictly (an unknown key or a wrong type is an error with its
line, column and dotted path; every bad value is named at once), then checks what run would
check before its first request: the matrix and the cells, the window and the trials, the
budget, the build mode, the simulator's profile when nothing else is measured, and the plan
(one shard). It prints what the file makes the bot do: what it measures and how long the matrix
is expected to take; against the budget, a pull request's GPU time (the first pass with its
build and model load, what is left for confirmations and reruns) and, with paired.mode auto
or always, the cells a paired run affords before the store holds store.min_history runs. It
warns when the first pass or any paired run cannot fit the budget, and of the variables
engine.serve names that this environment lacks (the runner must set them). Without --config it checks ./speedmatrix.yaml.

Exit status 0 when the file is valid, 2 with the reasons when it is not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" {
				if _, err := os.Stat(config.FileName); err != nil {
					return cmdutil.Usagef("--config: give the file to check, e.g. speedmatrix validate --config %s (there is no ./%s)", config.FileName, config.FileName)
				}
				configPath = config.FileName
			}
			o := measure.DefaultSettings()
			if err := cmdutil.ReadRunConfig(configPath, &o); err != nil {
				return cmdutil.Usagef("--config: %v", err)
			}
			lines, err := action.Validate(o, env.Getenv, env.Log)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(env.Stdout, "%s: valid\n%s", configPath, lines)
			return err
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "the speedmatrix.yaml to check (default ./speedmatrix.yaml)")
	return cmd
}
