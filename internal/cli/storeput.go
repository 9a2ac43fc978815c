package cli

import (
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// checkFileCommit returns a usage error when the results file at path measured another engine
// commit than sha (its engine.commit, in full or abbreviated, is not sha): stored under sha, a
// pull request's head or another commit's run would be compared as sha's result. A file that
// names no engine commit gets sha, and the log says so. The check is the CLI's, not store.Put's:
// tests store one fixture under many commits.
func checkFileCommit(env *Env, f *results.File, sha, path string) error {
	c := strings.ToLower(strings.TrimSpace(f.Engine.Commit))
	switch {
	case c == "":
		f.Engine.Commit = sha
		env.Log.Info("the results file names no engine commit; the stored copy records --commit", "file", path, "commit", sha)
		return nil
	case c == sha, len(c) >= store.MinCommitPrefix && hexRE.MatchString(c) && strings.HasPrefix(sha, c):
		return nil
	}
	return usagef("%s measured engine commit %s, not --commit %s: stored under %s it would be taken for that commit's result; "+
		"store it under its own commit (--commit %s), or, if its engine.commit is wrong, correct that in the file first",
		path, f.Engine.Commit, sha, shortCommit(sha), f.Engine.Commit)
}
