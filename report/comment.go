package report

import (
	"io"

	"github.com/speedmatrix/speedmatrix/results"
)

// CommentMarker is the hidden line that identifies speedmatrix's own pull-request comment, so
// that a rerun edits it instead of adding another; CheckMarker adds one per check name.
const CommentMarker = "<!-- speedmatrix:comment -->"

// PRComment writes the pull-request comment of c with the head's speed-matrix page folded in:
// NewComment's body, for a caller that knows nothing of the pull request.
func PRComment(w io.Writer, c *results.Comparison, head *results.File) error {
	out, err := NewComment(c, CommentContext{Head: head})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, out.Body)
	return err
}
