package results

import (
	"fmt"
	"time"
)

// DefaultWindow is the length of a decode measurement window where a run sets none: 30 s of
// the server's time (docs/method.md). The configuration's default and the client's are this one.
const DefaultWindow = 30 * time.Second

// MinWindow is the shortest decode window a run accepts: enough for a few samples even where
// the simulator runs many times faster than real time (its 30 s of model time at 100× is 300 ms).
const MinWindow = 100 * time.Millisecond

// CheckWindow returns an error where d is too short for a decode window: the one check of the
// window, for the configuration file and the client alike.
func CheckWindow(d time.Duration) error {
	if d < MinWindow {
		return fmt.Errorf("%v: must be at least %v (30s measures a real server)", d, MinWindow)
	}
	return nil
}
