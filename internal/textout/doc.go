// Package textout holds what the plain-text renderers (report, history) write with: a writer
// that keeps the first error, so that a renderer checks once at the end instead of after every
// line, counted nouns ("1 cell", "3 cells") and shell words quoted for a command a user copies. It is a leaf: it imports nothing of this
// module, and it does no I/O of its own.
//
// # Method
//
// ErrWriter wraps an io.Writer: after the first failed write, later writes are dropped and
// report success, and Err returns that first error once the renderer is done. Plural and
// Ordinal spell counts the same way in every renderer ("1 run", "2 runs"; 1st, 2nd, 11th).
package textout
