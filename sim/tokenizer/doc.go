// Package tokenizer is the simulator's tokenizer: a deterministic word-level tokenizer whose
// vocabulary grows as it meets new words, with a reverse map, so that /tokenize and /detokenize
// behave like a real server's (detokenize(tokenize(x)) == x, and a slice of token ids
// detokenizes to text that tokenizes back to the same ids). It also writes the natural-looking
// text the simulated model generates. It knows nothing of HTTP or of the engine.
//
// # Method
//
// Encode splits text into pieces (a word with the one space before it, or any other single
// character) and gives each new piece the next id, so the same text always encodes the same way
// within one Tokenizer and Decode maps ids back exactly; beyond a bounded vocabulary an unseen
// word is spelled one character per token, and an id never issued is an error. A Generator,
// seeded, appends prose of a given number of tokens from the generation words the vocabulary
// starts with. It must not depend on a real model's vocabulary or download one.
package tokenizer
