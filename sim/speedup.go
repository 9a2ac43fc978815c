package sim

import "fmt"

// DefaultSpeedup is how much faster than its profile the simulator runs unless told otherwise,
// the same for `speedmatrix sim`, `run` without --url (sim.speedup) and `demo`: fast enough for
// a demo, slow enough that a 2-core machine keeps the clock (the simulator itself uses about
// 0.2 core at 128 streams at 20×).
const DefaultSpeedup = 20

// maxSpeedup is the fastest the simulator runs its profile.
const maxSpeedup = 1e6

// Speedup returns the speedup x stands for: DefaultSpeedup for 0 (a setting left out), else x
// as CheckSpeedup takes it. With CheckSpeedup it is the one default and the one check of the
// simulator's speed.
func Speedup(x float64) (float64, error) {
	if x == 0 {
		return DefaultSpeedup, nil
	}
	return x, CheckSpeedup(x)
}

// CheckSpeedup returns an error saying what to give unless the simulator can run its profile
// x times faster: above 0 and at most 1e6 (1 is the profile's real speed).
func CheckSpeedup(x float64) error {
	if !(x > 0) || x > maxSpeedup {
		return fmt.Errorf("%g: want a number above 0 (1: the profile's real speed) and at most 1e6", x)
	}
	return nil
}
