// Package action is `speedmatrix action`, the GitHub Action's entry point: its flags and the
// wiring of internal/action.
package action

import (
	"net/http"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/sethvargo/go-githubactions"
	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/action"
)

// NewCmd builds `speedmatrix action`, the GitHub Action's entry point (action.yml).
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var mode string
	var cleanup bool
	cmd := &cobra.Command{
		Use:   "action",
		Short: "Run as the GitHub Action: route the event, measure, compare, comment and complete the check",
		Long: `action is what action.yml runs inside a GitHub Actions workflow. It reads the event
(GITHUB_EVENT_NAME, GITHUB_EVENT_PATH), the workflow context and the action's inputs (INPUT_*
variables: config, token, app-id, installation-id, private-key, check-name, comment,
fail-on-regression, results, artifact-dir, baseline, label, mode, cleanup, sha, pr, base-sha,
cells, aa, paired, shards, shard, plan, shard-artifacts), talks to GITHUB_API_URL, and keeps
one PR comment and one check run per commit.

Modes (the mode input or --mode; required): full (everything in one job), decide (route and start; outputs what to measure),
measure (no token: measure and write the artifact directory), report (no pull-request code:
post what the artifact holds, for the sha, pr and base-sha inputs only, compared with the
store's baseline, never the artifact's), cleanup (complete a check left in_progress, for an
if: always() step), pages (write the results store's history page into artifact-dir, for
GitHub Pages; output site). Outputs: verdict, conclusion, regressions, results, comparison,
comment-url (and run, sha, base-sha, pr, kind, cells, aa, paired in decide mode; shards, plan
and the job matrix with the shards input). Sharded: decide splits the matrix (shards), each
measure job measures one shard (shard, plan), report merges them (shard-artifacts) before
comparing.

A run is paired (the merge-base built and served alternately with the head, ABBA, as run
--paired does) on a maintainer's /bench paired, and by paired.mode (auto: when the stored
baseline cannot decide).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cleanup {
				mode = action.ModeCleanup
			}
			switch mode {
			case "", action.ModeFull, action.ModeDecide, action.ModeMeasure, action.ModeReport, action.ModeCleanup, action.ModePages:
			default:
				return cmdutil.Usagef("--mode %q: want full, decide, measure, report, cleanup or pages", mode)
			}
			a := githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(env.Stdout))
			var clientOpts []ghbot.Option
			if env.Net != nil { // the GitHub API is reached over env.Net too
				clientOpts = append(clientOpts, ghbot.WithTransport(&http.Transport{DialContext: env.Net.DialContext}))
			}
			return action.Run(cmd.Context(), action.Deps{
				Action:        a,
				Log:           env.Log,
				Mode:          mode,
				ClientOptions: clientOpts,
				Measure:       env.MeasureDeps(),
			})
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "", "full, decide, measure, report, cleanup or pages (default: the mode input; one of the two is required)")
	cmd.Flags().BoolVar(&cleanup, "cleanup", false, "complete any check run of ours left in_progress on the commit as cancelled (for an if: always() step)")
	return cmd
}
