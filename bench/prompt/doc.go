// Package prompt builds benchmark prompts of an exact token length from natural English prose
// that ships with the program (corpus.txt, original text written for speedmatrix). Prompts are
// sized with the server's own tokenizer (POST /tokenize and /detokenize through package
// bench/server), so no tokenizer or model is downloaded; servers without /tokenize get a prompt
// sized by a measured characters-per-token ratio and a Note saying so. Every prompt starts with a
// unique run prefix, "run <id> context <label>: ", so no cache left by an earlier run can serve
// it. The package sends no completion requests itself (calibration goes through the caller's
// Measure function) and holds no state beyond one Builder's cached measurements.
package prompt
