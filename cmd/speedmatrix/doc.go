// Command speedmatrix measures, compares and reports the speed matrix of LLM inference engines.
//
// # Method
//
// main wires the process to internal/cli and nothing else: the arguments, the standard streams
// and the environment go in, cli.Run runs the subcommand, and cli.ExitCode maps its error to the
// exit status (SIGINT and SIGTERM cancel the command's context, which then exits 130 or 143).
// The tests of this folder check the shipped documents against the program (README figures,
// docs/*.md examples, the calibration tables) and the binary end to end.
//
// It must hold no logic of its own: every flag, measurement, statistic and rendering lives in
// the packages below internal/cli.
package main
