package action

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/speedmatrix/speedmatrix/results"
)

// measureJobError is why a report found no results to post: the measuring job stopped before
// it wrote them, or wrote a file that is not results. Its text is written for the reader of the
// check and the comment: what happened to the measuring job, in words, and where its log is. It
// never carries a path of the report runner nor the measuring job's own error text, which is
// untrusted (the job ran the pull request's code).
type measureJobError struct {
	// Result is the measuring job's result as the workflow saw it (needs.measure.result:
	// success, failure, cancelled, skipped), or "" when the workflow did not pass it.
	Result string
	// Invalid is set when a results file was there but could not be read as results; it is
	// logged on the report job, not shown.
	Invalid error
	// Partial is the results file the measuring job left when it stopped before every planned
	// cell was measured (marked partial): shown, never compared or stored.
	Partial *results.File
}

func (e *measureJobError) Error() string {
	if e.Invalid != nil {
		return "the measuring job's results file is not valid results: " + e.Invalid.Error()
	}
	if e.Partial != nil {
		return "the measuring job " + e.ended() + " before it measured every cell"
	}
	return "the measuring job " + e.ended() + " before it wrote results"
}

// ended says how the measuring job ended, from its result.
func (e *measureJobError) ended() string {
	switch e.Result {
	case "failure":
		return "failed"
	case "cancelled":
		return "was cancelled"
	case "skipped":
		return "was skipped"
	case "success":
		return "succeeded but left no results"
	default:
		return "stopped"
	}
}

// why is the sentence the check and the comment show, with the workflow run's link.
func (e *measureJobError) why(runURL string) string {
	where := "see its log in the workflow run"
	if runURL != "" {
		where = fmt.Sprintf("see its log in [the workflow run](%s)", runURL)
	}
	if e.Invalid != nil {
		return fmt.Sprintf("The measuring job wrote a results file that speedmatrix cannot read as results, so nothing was compared: %s. The report job's log says what is wrong with the file.", where)
	}
	if e.Partial != nil {
		return fmt.Sprintf("The measuring job %s before it measured every cell, so nothing was compared: %s.", e.ended(), where)
	}
	if e.Result == "success" {
		return fmt.Sprintf("The measuring job succeeded but its artifact holds no results file, so nothing was compared: %s, and check that the measure job uploads its artifact-dir.", where)
	}
	return fmt.Sprintf("The measuring job %s before it wrote results: %s.", e.ended(), where)
}

// measureFailure classifies an error reading the artifact's results file: a missing file is the
// measuring job stopping early, anything else a file that is not results.
func measureFailure(result string, err error) *measureJobError {
	if errors.Is(err, fs.ErrNotExist) {
		return &measureJobError{Result: result}
	}
	return &measureJobError{Result: result, Invalid: err}
}
