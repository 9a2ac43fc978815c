package report

import (
	"bytes"
	"io"

	"github.com/speedmatrix/speedmatrix/results"
)

// CommentMarker is the hidden line that identifies speedmatrix's own pull-request comment, so
// that a rerun edits it instead of adding another.
const CommentMarker = "<!-- speedmatrix:comment -->"

// PRComment writes the pull-request comment: the marker, the comparison with its verdicts, and
// the head's speed-matrix page folded under it.
func PRComment(w io.Writer, c *results.Comparison, head *results.File) error {
	var b bytes.Buffer
	b.WriteString(CommentMarker + "\n")
	if err := ComparisonMarkdown(&b, c); err != nil {
		return err
	}
	if head != nil {
		b.WriteString("\n<details><summary>Head: the speed test matrix</summary>\n\n")
		if err := NewPage(head).Markdown(&b); err != nil {
			return err
		}
		b.WriteString("</details>\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}
