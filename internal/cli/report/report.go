// Package report is `speedmatrix report`: its flags, then a renderer of package report.
package report

import (
	"errors"
	"fmt"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// NewCmd builds `speedmatrix report`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "report [--format markdown|json|csv] RESULTS",
		Short: "Render a results file as the speed-matrix page",
		Long: `Report renders a results file as the "Speed test matrix" page: title, engine line,
Hardware, Engine, Run, Launch command, the prefill list, the sustained-decode matrix (rows
are contexts, columns simultaneous requests) and the All measurements table, with numbers
formatted as llm-inference-bench prints them.

Formats:
  markdown  the page as GitHub markdown (default); "speedmatrix import" reads it back
  json      the same page as JSON, every number formatted as on the page
  csv       one row per cell with unformatted numbers, for spreadsheets and scripts`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "markdown" && format != "json" && format != "csv" {
				return cmdutil.Usagef("--format %q: want markdown, json or csv", format)
			}
			f, err := results.ReadFile(args[0])
			if err != nil {
				return reportReadError(args[0], err)
			}
			switch format {
			case "json":
				return report.NewPage(f).JSON(env.Stdout)
			case "csv":
				return report.CSV(env.Stdout, f)
			}
			return report.NewPage(f).Markdown(env.Stdout)
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "output format: markdown, json or csv")
	return cmd
}

// reportReadError explains a results file that could not be read; a comparison file gets the
// command that renders comparisons.
func reportReadError(path string, err error) error {
	var wf *results.WrongFileError
	if !errors.As(err, &wf) || wf.Got != "comparison" {
		return err
	}
	base, head := "BASE", "HEAD"
	if c, cerr := results.ReadComparisonFile(path); cerr == nil && c.Base.Path != "" && c.Head.Path != "" {
		base, head = c.Base.Path, c.Head.Path
	}
	return fmt.Errorf("%s is a comparison file, not a results file: speedmatrix report renders results files. "+
		"A comparison is rendered by the compare that makes it; run it again with the format you want: "+
		"speedmatrix compare --format markdown %s %s (or --format text)", path, textout.ShellQuote(base), textout.ShellQuote(head))
}
