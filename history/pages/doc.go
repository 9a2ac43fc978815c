// Package pages renders a history as a static site for people, the one `speedmatrix history
// --html` and the action's pages mode publish: per configuration one index.html with its change
// points, the latest run's matrix and every cell's trend chart (package history draws the
// charts and finds the change points), and with several configurations an index.html that
// lists them, each page in the folder of its config id.
//
// # Method
//
// Each page is a model (what the template shows) filled from a history.History and written by
// html/template, which escapes every text that came from a results file. The latest matrix is
// laid out by package report's page model (report.NewPage), so it reads as the results page
// does. The page has no scripts and loads nothing from elsewhere; the charts are SVG files
// beside it, linked by relative paths (ChartName), suitable for GitHub Pages.
//
// It is pure: it returns the site's files keyed by path and must not write them (the caller
// does, internal/sitedir), nor analyze anything history did not already find.
package pages
