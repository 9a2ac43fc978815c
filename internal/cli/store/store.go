// Package store is `speedmatrix store` (list, get, put, prune, reindex): their flags, then
// package store.
package store

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// NewCmd builds `speedmatrix store`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var sf cmdutil.StoreFlags
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Inspect and maintain the results store (list, get, put, prune, reindex)",
		Long: `store inspects the results store: a local directory (--store DIR) or the repository's data
branch (--branch speedmatrix-data --repo OWNER/NAME, with GITHUB_TOKEN). Both hold
results/<engine-commit>/<config-id>.json for default-branch results (baselines and history),
pr/<number>/<engine-commit>/<config-id>.json for pull requests' results, aa/ for A/A reruns,
and index.json. The config id is a hash of what makes results comparable (model, GPU model and
count, the matrix, the launch command without secrets, the simulator's time scale).`,
	}
	sf.Add(cmd.PersistentFlags())

	var filter store.Filter
	var kind, format string
	list := &cobra.Command{
		Use:   "list",
		Short: "List stored results, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := store.CheckKind(kind, true); err != nil {
				return err
			}
			s, err := sf.OpenConfigured(cmd.Context(), env)
			if err != nil {
				return err
			}
			filter.Kind = store.Kind(kind)
			if filter.Commit != "" {
				sha, err := store.ResolveCommit(cmd.Context(), s, filter.Commit, "--commit")
				switch {
				case errors.Is(err, store.ErrNotFound):
					filter.Commit = strings.ToLower(filter.Commit) // matches nothing: said below
				case err != nil:
					return err
				default:
					filter.Commit = sha
				}
			}
			es, err := s.List(cmd.Context(), filter)
			if err != nil {
				return err
			}
			if len(es) == 0 && filter != (store.Filter{Limit: filter.Limit}) {
				all, err := s.List(cmd.Context(), store.Filter{})
				if err != nil {
					return err
				}
				env.Log.Warn(fmt.Sprintf("store list: no stored result matches %s; %s", filterText(cmd), store.DescribeHeld(all)))
			}
			return store.WriteList(env.Stdout, es, format == "json")
		},
	}
	list.Flags().StringVar(&filter.ConfigID, "config-id", "", "only this config id")
	list.Flags().StringVar(&kind, "kind", "", "only this kind: default-branch, pr or aa")
	list.Flags().StringVar(&filter.Commit, "commit", "", "only this engine commit (full id, an abbreviation of 7 or more hex digits as list prints, or a revision the local clone resolves)")
	list.Flags().IntVar(&filter.PR, "pr", 0, "only this pull request")
	list.Flags().IntVar(&filter.Limit, "limit", 0, "at most this many, newest first")
	list.Flags().StringVar(&format, "format", "text", "text or json")

	var out string
	get := &cobra.Command{
		Use:   "get COMMIT [CONFIG_ID]",
		Short: "Print (or write with -o) the default-branch results of a commit (and config id)",
		Long: `get prints the default-branch result of COMMIT (a full id, an abbreviation of 7 or more hex
digits as store list prints it, or a revision the local clone resolves) for CONFIG_ID. Without
CONFIG_ID, the commit's one default-branch result; a commit with results of several configs
needs the id, and the error lists them.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := sf.OpenConfigured(ctx, env)
			if err != nil {
				return err
			}
			commit, err := store.ResolveCommit(ctx, s, args[0], "COMMIT")
			if err != nil {
				return err
			}
			if len(args) == 1 {
				id, err := store.OnlyConfigOf(ctx, s, commit)
				if err != nil {
					return err
				}
				args = append(args, id)
			}
			f, _, err := s.Get(ctx, commit, args[1])
			var damaged *store.DamagedError
			if err != nil && !errors.As(err, &damaged) {
				// Only when it found nothing: say what the store holds of the commit instead.
				if cerr := store.CheckStoredConfig(ctx, s, commit, args[1]); cerr != nil {
					return cerr
				}
			}
			if err != nil {
				return err
			}
			if out != "" {
				return results.WriteOutputFile(out, f)
			}
			return results.Write(env.Stdout, f)
		},
	}
	get.Flags().StringVarP(&out, "output", "o", "", "write the results file here instead of stdout")

	var e store.Entry
	var commit, putKind, base, putGit string
	put := &cobra.Command{
		Use:   "put RESULTS.json --commit SHA",
		Short: "Store an existing results file (default-branch, or --kind pr --pr N [--base SHA], or --kind aa)",
		Long: `put stores RESULTS.json as --commit's result. The file must have measured that commit: an
engine.commit in the file other than --commit is refused (a file without one gets --commit).
--commit and --base may be abbreviated as store list prints them (7 or more hex digits) when
the file's engine.commit, a stored commit or the clone (--git DIR, default the current
directory) completes them.
A default-branch result replaces the commit's earlier result of the same config, which is
first kept as an A/A rerun of the commit (aa/), unless it is the same run stored again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckKind(putKind, false); err != nil {
				return err
			}
			if store.Kind(putKind) == store.KindPR && e.PR <= 0 {
				return cmdutil.Usagef("--kind pr needs --pr N, the pull request's number")
			}
			if base != "" && store.Kind(putKind) != store.KindPR {
				return cmdutil.Usagef("--base is the default-branch commit a pull request's result was compared with: give it with --kind pr --pr N")
			}
			c, err := sf.Config()
			if err != nil {
				return err
			}
			f, err := results.ReadFile(args[0])
			if err != nil {
				return err
			}
			s, where, err := sf.Open(cmd.Context(), env, c)
			if err != nil {
				return err
			}
			e.Kind = store.Kind(putKind)
			got, err := store.PutFile(cmd.Context(), env.Log, s, store.GitCommits{Dir: putGit}, e, commit, base, f, args[0])
			if err != nil {
				return err
			}
			env.Log.Info("stored", "where", where, "path", got.Path, "config_id", got.ConfigID, "base", got.Base)
			fmt.Fprintln(env.Stdout, got.Path)
			return nil
		},
	}
	put.Flags().StringVar(&commit, "commit", "", "the engine commit the results belong to: a full id, an abbreviation of 7 or more hex digits (of the file's engine.commit, of a commit the store holds, or one the clone knows), or a revision the clone resolves; must be the file's engine.commit, which a file without one gets")
	put.Flags().StringVar(&putGit, "git", "", "the clone of the engine that resolves --commit and --base when they are not full ids (default: the current directory)")
	put.Flags().StringVar(&putKind, "kind", string(store.KindDefault), "default-branch, pr or aa")
	put.Flags().IntVar(&e.PR, "pr", 0, "the pull request of a --kind pr result")
	put.Flags().StringVar(&e.RunID, "run-id", "", "the run id (default: the file's)")
	put.Flags().StringVar(&base, "base", "", "with --kind pr: the default-branch commit whose result it was compared with (prune keeps that baseline while it keeps this result)")

	var keep, keepAA, prDays int
	var dryRun bool
	var protect []string
	var gitDir, ref string
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Remove results beyond the retention bounds (never a current baseline)",
		Long: `prune keeps the newest --keep default-branch results and --keep-aa A/A reruns of every
config id, and pull requests' results for --pr-days days; the defaults come from the
configuration's store.retention. The newest default-branch result of each config id (the
current baseline) is never removed, nor the results of --protect commits, nor the baseline a
kept pull request's result was compared with (store put --base).

Newest is along the default branch's first parents with a clone of the engine (--git DIR, from
--ref, default the clone's default branch: origin/HEAD, else main) or on the data branch (--branch: the repository's default branch, or
--ref): a result is as new as its commit's place there, so a baseline measured later than its
commit (speedmatrix baseline --commit OLD) does not push the tip's result out, and results of
commits not on the line (force-pushed away, or older than the commits walked) rank after every
one that is, by time. Otherwise newest is the last measured. The log says which.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := sf.Config()
			if err != nil {
				return err
			}
			fs := cmd.Flags()
			p := store.Policy{Keep: c.Store.Retention.Keep, KeepAA: c.Store.Retention.KeepAA,
				PRAge: time.Duration(c.Store.Retention.PRDays) * 24 * time.Hour, DryRun: dryRun}
			if fs.Changed("keep") {
				p.Keep = keep
			}
			if fs.Changed("keep-aa") {
				p.KeepAA = keepAA
			}
			if fs.Changed("pr-days") {
				p.PRAge = time.Duration(prDays) * 24 * time.Hour
			}
			if p.Keep < 0 || p.KeepAA < 0 || p.PRAge < 0 {
				return cmdutil.Usagef("--keep, --keep-aa and --pr-days must be 0 (no bound) or more")
			}
			depth := store.LineageDepth(p.Keep)
			src, err := sf.OpenAlong(cmd.Context(), env, c, gitDir, ref, p.Keep > 0, depth)
			if err != nil {
				return err
			}
			s := src.Store
			for _, r := range protect {
				sha, err := store.ResolveCommit(cmd.Context(), s, r, "--protect")
				if err != nil {
					return err
				}
				p.Protect = append(p.Protect, sha)
			}
			if p.Lineage, err = src.Lineage(cmd.Context(), depth); err != nil {
				return err
			}
			if p.Keep > 0 {
				if err := src.LogRecency(cmd.Context(), env.Log, p); err != nil {
					return err
				}
			}
			removed, err := s.Prune(cmd.Context(), p)
			if err != nil {
				return err
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			for _, e := range removed {
				fmt.Fprintf(env.Stdout, "%s %s\n", verb, e.Path)
			}
			env.Log.Info("prune", verb, len(removed))
			return nil
		},
	}
	prune.Flags().IntVar(&keep, "keep", 0, "default-branch results kept per config id (default store.retention.keep; 0 keeps all)")
	prune.Flags().IntVar(&keepAA, "keep-aa", 0, "A/A reruns kept per config id (default store.retention.keep_aa; 0 keeps all)")
	prune.Flags().IntVar(&prDays, "pr-days", 0, "days pull requests' results are kept (default store.retention.pr_days; 0 keeps all)")
	prune.Flags().StringArrayVar(&protect, "protect", nil, "never remove this commit's results (repeatable)")
	prune.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be removed, remove nothing")
	prune.Flags().StringVar(&gitDir, "git", "", "a clone of the engine repository: rank default-branch results along the first parents of --ref in it instead of by the time they were measured (default: the clone in the current directory, along its default branch, when the stored commits are on it)")
	prune.Flags().StringVar(&ref, "ref", "", "the default branch (or commit) whose first parents rank the results (default: the default branch of --git, its origin/HEAD or else main; the repository's default branch with --branch)")

	cmd.AddCommand(list, get, put, prune, newStoreReindexCmd(env, &sf)) // reindex.go
	return cmd
}
