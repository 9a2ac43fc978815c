//go:build !linux

package stream

import "time"

// threadCPU does report that per-thread CPU time is not available here.
func threadCPU() (time.Duration, bool) { return 0, false }

// processCPU does report that process CPU time is not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
