package calibrate

import (
	"context"
	"testing"
)

// BenchmarkCalibrate measures one A/A and one A/B comparison with the advised second look.
func BenchmarkCalibrate(b *testing.B) {
	s := DefaultSettings()
	s.AA, s.AB = 1, 1
	for i := 0; b.Loop(); i++ {
		s.Seed = uint64(i + 1)
		if _, err := Run(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
}
