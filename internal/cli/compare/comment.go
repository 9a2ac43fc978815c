package compare

import (
	"io"

	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// `speedmatrix compare --format comment BASE HEAD` prints the pull-request comment the bot
// would post for this comparison, from a user's own results files: the body of report.NewComment,
// the renderer the action calls (internal/action/render.go), with its hidden marker lines. The
// comparison is compare's, with the settings the command line gives (--config for the bot's);
// what only the bot knows (the pull request, the commits, the run's links) is left out, as the
// comment leaves out whatever its context lacks.

// commentFormat is compare's --format that prints the pull-request comment.
const commentFormat = "comment"

// rerunsHeadOnly reports whether the bot's rerun of this head measures the head alone against
// the stored base, as `/bench rerun` does (internal/action: compareWithHistory): every head but
// a paired run's, whose rerun pairs again. compare.Thresholds.HeadOnlyReruns sizes the advice.
func rerunsHeadOnly(head []*results.File) bool {
	for _, f := range head {
		if f.Run.Pairing != nil {
			return false
		}
	}
	return len(head) > 0
}

// writeComment writes the pull-request comment of c as the bot posts it on a pull request. The
// head's page folded into it is the last head file's (after a rerun, the rerun's, as the bot's).
func writeComment(w io.Writer, c *results.Comparison, head []*results.File) error {
	x := report.CommentContext{}
	if len(head) > 0 {
		x.Head = head[len(head)-1]
	}
	cm, err := report.NewComment(c, x)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, cm.Body)
	return err
}
