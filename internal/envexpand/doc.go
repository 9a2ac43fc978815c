// Package envexpand expands ${NAME} references, the one substitution speedmatrix applies to a
// launch command and its environment (config and engine share it). It must not run a shell:
// nothing but ${NAME} and $$ is interpreted.
//
// # Method
//
// Expand replaces each ${NAME} by the caller's lookup (the process environment, or a config's
// env map over it) and each $$ by $; any other $ is kept as written. An unset variable, a ${
// without its }, or a name that is not [A-Za-z_][A-Za-z0-9_]* (IsName) is an error that names
// the variable and never holds a value, so that a secret cannot leak into a message.
package envexpand
