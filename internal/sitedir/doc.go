// Package sitedir writes a static site (package history's pages and charts, keyed by a path
// relative to the site) into a folder on disk, for `speedmatrix history --html` and the action's
// GitHub Pages step.
//
// # Method
//
// Write takes the site as a map from slash-separated relative paths to contents, writes the
// files in sorted order, creates folders as needed and writes each file atomically
// (results.WriteFileAtomic: a reader never sees half a page).
//
// It must not write outside the folder it is given: a path that is absolute, climbs out of the
// folder or holds a backslash is refused before anything is written for it. It renders nothing
// and deletes nothing.
package sitedir
