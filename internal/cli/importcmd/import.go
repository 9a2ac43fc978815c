// Package importcmd is `speedmatrix import` (a folder not named import, a keyword): its flags,
// then results.Import.
package importcmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/results"
)

// NewCmd builds `speedmatrix import`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "import REPORT",
		Short: "Import an llm-inference-bench \"Speed test matrix\" report as a results file",
		Long: `Import reads an llm-inference-bench "Speed test matrix" report — the text of its web
page, or the same report as markdown (as "speedmatrix report" writes it) — and writes a
speedmatrix results file (schema speedmatrix/results/v1).

The numbers come from the report's "All measurements" table; the prefill list and the
sustained-decode matrix are checked against it, and any disagreement is an error. Imported
cells carry summary numbers only (no raw samples), which compare treats with a noise prior.
A malformed report fails with the line number and what was expected; nothing is written then.
Use - as REPORT to read standard input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, name := cmd.InOrStdin(), "stdin"
			if args[0] != "-" {
				fh, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer fh.Close()
				in, name = fh, filepath.Base(args[0])
			}
			f, err := results.Import(in, name)
			if err != nil {
				if _, rerr := results.ReadFile(args[0]); rerr == nil {
					return fmt.Errorf("import %s: %s is already a speedmatrix results file: compare and report read it as it is (import converts llm-inference-bench reports)", name, args[0])
				}
				return fmt.Errorf("import %s: %w", name, err)
			}
			if out == "" || out == "-" {
				return results.Write(env.Stdout, f)
			}
			if err := results.WriteOutputFile(out, f); err != nil {
				return err
			}
			env.Log.Info("imported", "report", name, "results", out, "prefill_cells", len(f.Prefill), "decode_cells", len(f.Decode))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "results file to write (default: standard output)")
	return cmd
}
