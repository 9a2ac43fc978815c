package profile

import "github.com/speedmatrix/speedmatrix/results"

// AtModelSpeed returns f in the simulated profile's time, as Fit reads it: for a file measured
// on the built-in simulator at X× speed, a copy of its cell summaries with rates divided and
// times multiplied by X (trials dropped); any other file as it is. A table that sets a fitted
// profile against its input must read the input this way.
func AtModelSpeed(f *results.File) *results.File {
	if s := simulatorSpeedup(f); s != 1 {
		return atModelSpeed(f, s)
	}
	return f
}
