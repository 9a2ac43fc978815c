package cli

import (
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/store"
)

// storePutHint is the command that stores head as pull request N's result citing its baseline,
// in the store sf names.
func storePutHint(sf *storeFlags, headPath string, hb store.HeadBaseline) string {
	args := []string{"speedmatrix", "store", "put"}
	if sf.dir != "" {
		args = append(args, "--store", textout.ShellQuote(sf.dir))
	} else {
		args = append(args, "--branch", textout.ShellQuote(sf.branch))
		if sf.repo != "" {
			args = append(args, "--repo", textout.ShellQuote(sf.repo))
		}
	}
	first, _, _ := strings.Cut(headPath, ",")
	args = append(args, "--kind", "pr", "--pr", "N", "--commit", hb.HeadCommit, "--base", hb.Commit, textout.ShellQuote(strings.TrimSpace(first)))
	return strings.Join(args, " ")
}
