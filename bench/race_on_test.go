//go:build race

package bench

// raceEnabled is set when the tests run under the race detector, which slows every goroutine
// several times and so distorts timing at high concurrency.
const raceEnabled = true
