// Package config reads speedmatrix.yaml, the one configuration file of speedmatrix: the
// settings of run (the matrix, the server, the engine's provenance), the engine's lifecycle
// (engine.source, engine.build, engine.serve), and the sections of later stages (gpu, github,
// compare, store, bisect).
//
// The file is strict: an unknown key or a value of the wrong type is an error that names the
// file, line and column and the key's dotted path (engine.serve.port), never a Go type. Load
// reads and checks a file; Default gives the defaults, which live only there; Validate names
// every bad setting by its path. Durations are Go duration strings ("30s", "60m").
//
// ${NAME} in engine.serve.command and engine.serve.env is expanded by Expand from the
// environment and PORT when the server starts, not when the file is read: the configuration
// never holds a secret, so printing it leaks none. Nothing runs through a shell unless
// engine.build is {command: "..."}.
//
// The package reads and checks; it must not run anything, touch the network, or read the
// environment itself (the caller passes a lookup). It imports no package that measures or
// compares (bench, compare): its names of endpoints and matrices are package results', and the
// caller turns its settings into theirs (compare.Overrides for compare and store's keys).
//
// The JSON Schema of the file is schema/speedmatrix-v1.schema.json; a test keeps it and the Go
// types in step.
package config
