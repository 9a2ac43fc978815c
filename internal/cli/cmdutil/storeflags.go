package cmdutil

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/sethvargo/go-githubactions"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/store"
	"github.com/spf13/pflag"
)

// StoreFlags say which store a command uses: a local directory (--store), or a data branch of
// a GitHub repository (--branch, --repo, GITHUB_TOKEN), else the configuration's store.dir.
type StoreFlags struct {
	Dir, Branch, Repo, ConfigPath string
}

// Add declares the flags on f.
func (s *StoreFlags) Add(f *pflag.FlagSet) {
	f.StringVar(&s.Dir, "store", "", "local directory store (results/, pr/, aa/, index.json); default: the configuration's store.dir")
	f.StringVar(&s.Branch, "branch", "", "use the data branch of this name on GitHub instead (needs --repo or GITHUB_REPOSITORY, and GITHUB_TOKEN: "+branchTokenNeeds+")")
	f.StringVar(&s.Repo, "repo", "", "the GitHub repository OWNER/NAME of --branch (default $GITHUB_REPOSITORY)")
	f.StringVar(&s.ConfigPath, "config", "", "speedmatrix.yaml: its store section gives the defaults (store.dir, retention)")
}

// Config reads the configuration file, or returns the defaults.
func (s *StoreFlags) Config() (config.Config, error) {
	if s.ConfigPath == "" {
		return config.Default(), nil
	}
	c, err := config.Load(s.ConfigPath)
	if err != nil {
		return config.Config{}, Usagef("--config: %v", err)
	}
	return c, nil
}

// branchTokenNeeds is the permission --branch's token needs, by what the command does.
const branchTokenNeeds = "contents: read to read it (store list, store get, history, compare), contents: write to change it (store put, store prune, baseline)"

var repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// Open returns the store the flags name.
func (s *StoreFlags) Open(ctx context.Context, env *Env, c config.Config) (store.Store, string, error) {
	switch {
	case s.Dir != "" && s.Branch != "":
		return nil, "", Usagef("give --store or --branch, not both")
	case s.Dir != "":
		return store.NewDir(s.Dir), "store " + s.Dir, nil
	case s.Branch != "":
		gh, owner, name, err := s.GitHub(ctx, env)
		if err != nil {
			return nil, "", err
		}
		return s.BranchStore(env, gh, owner, name), fmt.Sprintf("data branch %s of %s/%s", s.Branch, owner, name), nil
	case c.Store.Dir != "":
		return store.NewDir(c.Store.Dir), "store " + c.Store.Dir, nil
	}
	return nil, "", Usagef("no store: give --store DIR, --branch NAME --repo OWNER/NAME, or store.dir in --config")
}

// GitHub returns the client of --branch's repository (--repo or GITHUB_REPOSITORY, with
// GITHUB_TOKEN) and the repository's owner and name.
func (s *StoreFlags) GitHub(ctx context.Context, env *Env) (*ghbot.Client, string, string, error) {
	repo := s.Repo
	if repo == "" {
		repo = env.Getenv("GITHUB_REPOSITORY")
	}
	if !repoRE.MatchString(repo) {
		return nil, "", "", Usagef("--branch needs the repository: --repo OWNER/NAME (or GITHUB_REPOSITORY); got %q", repo)
	}
	token := env.Getenv("GITHUB_TOKEN")
	if token == "" {
		return nil, "", "", Usagef("--branch needs GITHUB_TOKEN, a token of %s with %s", repo, branchTokenNeeds)
	}
	gh, err := ghbot.NewClient(ctx, ghbot.Auth{Token: token}, env.Getenv("GITHUB_API_URL"),
		ghbot.WithLogger(env.Log), ghbot.WithActions(githubactions.New(githubactions.WithWriter(env.Stderr))))
	if err != nil {
		return nil, "", "", err
	}
	owner, name, _ := strings.Cut(repo, "/")
	return gh, owner, name, nil
}

// BranchStore returns the store on --branch of owner/name.
func (s *StoreFlags) BranchStore(env *Env, gh *ghbot.Client, owner, name string) store.Store {
	return store.NewBranch(gh.GitHub(), owner, name, store.WithBranchName(s.Branch), store.WithBranchLogger(env.Log))
}

// OpenConfigured reads the configuration and returns the store the flags name.
func (s *StoreFlags) OpenConfigured(ctx context.Context, env *Env) (store.Store, error) {
	c, err := s.Config()
	if err != nil {
		return nil, err
	}
	st, _, err := s.OpenToRead(ctx, env, c) // list and get only read
	return st, err
}

// ExistingStore returns a usage error when dir is not a directory: a command that only reads a
// local store (store list, get, prune, compare --store, calibrate --store) must not take a
// mistyped folder for an empty store, nor create one.
func ExistingStore(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return Usagef("store %s: no such directory; give the folder that speedmatrix baseline or store put wrote (they create it)", dir)
	}
	return nil
}

// OpenToRead returns the store the flags name, as open does, once a local store's directory is
// known to exist.
func (s *StoreFlags) OpenToRead(ctx context.Context, env *Env, c config.Config) (store.Store, string, error) {
	if s.Branch == "" {
		dir := s.Dir
		if dir == "" {
			dir = c.Store.Dir
		}
		if dir != "" {
			if err := ExistingStore(dir); err != nil {
				return nil, "", err
			}
		}
	}
	return s.Open(ctx, env, c)
}

// OpenAlong opens the store sf names and, when graph is set, the commit graph that orders its
// default-branch results: --ref's (default the clone's default branch: origin/HEAD, else main)
// in the clone gitDir; else, with --branch, the
// repository's default branch (or --ref) on GitHub; else, run inside the engine's clone, its
// default branch when the stored commits are on its first parents, at most depth back
// (cwdLineage); else none. --ref without a graph is a usage error. The graph remembers its walks
// (store.MemoCommits): finding the clone's line walks it once for all.
func (sf *StoreFlags) OpenAlong(ctx context.Context, env *Env, c config.Config, gitDir, ref string, graph bool, depth int) (store.Along, error) {
	if ref != "" && gitDir == "" && sf.Branch == "" {
		return store.Along{}, Usagef("--ref needs a commit graph: --git DIR (a clone of the engine), or --branch (the repository's default branch)")
	}
	var a store.Along
	tip := ref
	if sf.Branch != "" && sf.Dir == "" {
		gh, owner, name, err := sf.GitHub(ctx, env)
		if err != nil {
			return store.Along{}, err
		}
		a.Store = sf.BranchStore(env, gh, owner, name)
		if gitDir == "" && graph {
			gc := store.GitHubCommits{GH: gh.GitHub(), Owner: owner, Repo: name}
			a.Name = fmt.Sprintf("%s of %s/%s", ref, owner, name)
			if tip == "" {
				if tip, err = gc.Tip(ctx, ""); err != nil {
					return store.Along{}, fmt.Errorf("--branch: %w (give --git DIR, a clone of the engine, to order the results along its commits instead)", err)
				}
				a.Name = fmt.Sprintf("the default branch of %s/%s", owner, name)
			}
			a.Commits = store.MemoCommits(gc)
		}
	} else {
		st, _, err := sf.OpenToRead(ctx, env, c)
		if err != nil {
			return store.Along{}, err
		}
		a.Store = st
	}
	if gitDir != "" {
		gc := store.GitCommits{Dir: gitDir}
		if tip == "" {
			// The clone's default branch, not its HEAD: a clone checked out on a pull
			// request's branch would rank main's latest results as off the line.
			var err error
			if tip, err = gc.DefaultBranch(ctx); err != nil {
				return store.Along{}, Usagef("--git %s: %v", gitDir, err)
			}
		}
		if _, err := gc.RevParse(ctx, tip); err != nil {
			return store.Along{}, Usagef("--git %s --ref %s: %v", gitDir, tip, err)
		}
		a.Commits, a.Name = store.MemoCommits(gc), fmt.Sprintf("%s in %s", tip, gitDir)
	}
	if a.Commits == nil && graph && sf.Branch == "" {
		// Run inside the engine's clone, as compare --store HEAD is: along its default branch
		// when the stored commits are on it.
		if commits, branch, ok := store.CwdLineage(ctx, a.Store, depth); ok {
			a.Commits, tip, a.Name = commits, branch, branch+store.CwdCloneNote
		}
	}
	a.Tip = tip
	return a, nil
}

// Text returns the flags that name the store the flags chose, for a command line the
// user can run later.
func (s *StoreFlags) Text() string {
	var parts []string
	switch {
	case s.Dir != "":
		parts = append(parts, "--store "+s.Dir)
	case s.Branch != "":
		parts = append(parts, "--branch "+s.Branch)
		if s.Repo != "" {
			parts = append(parts, "--repo "+s.Repo)
		}
	}
	if s.ConfigPath != "" {
		parts = append(parts, "--config "+s.ConfigPath)
	}
	return strings.Join(parts, " ")
}
