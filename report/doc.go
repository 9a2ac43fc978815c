// Package report renders results and comparisons as people read them: the "Speed test matrix"
// page of a results file in markdown, CSV and JSON (results_page.go, results_markdown.go); a
// comparison as text and markdown with its verdict tables (comparison_text.go,
// comparison_markdown.go); and the pull-request comment of the bot (prcomment.go, comment*.go).
//
// # Method
//
// Each renderer first lays its input out as a model (a Page, the comment's model) and then
// writes that model: numbers print through internal/numfmt exactly as the reference report
// prints them, a simulator run's figures are shown in its profile's time (timescale.go), a
// comparison's verdicts are taken as package compare decided them (results.Outcomes), and every
// text that came from a results file is escaped for the markdown it lands in (escape.go).
//
// It is pure: it formats what it is given. It must not read or write files, call an API,
// measure, or decide anything a comparison did not already decide.
package report
