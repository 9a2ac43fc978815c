//go:build race

package prompt

// raceEnabled is true under the race detector, which makes the 1M-token case too slow.
const raceEnabled = true
