package compare

import (
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/store"
)

// storePutHint is the command that stores head as pull request N's result citing its baseline,
// in the store sf names.
func storePutHint(sf *cmdutil.StoreFlags, headPath string, hb store.HeadBaseline) string {
	args := []string{"speedmatrix", "store", "put"}
	if sf.Dir != "" {
		args = append(args, "--store", textout.ShellQuote(sf.Dir))
	} else {
		args = append(args, "--branch", textout.ShellQuote(sf.Branch))
		if sf.Repo != "" {
			args = append(args, "--repo", textout.ShellQuote(sf.Repo))
		}
	}
	first, _, _ := strings.Cut(headPath, ",")
	args = append(args, "--kind", "pr", "--pr", "N", "--commit", hb.HeadCommit, "--base", hb.Commit, textout.ShellQuote(strings.TrimSpace(first)))
	return strings.Join(args, " ")
}
