package vmatrix

import "github.com/speedmatrix/speedmatrix/sim/engine"

type engineDecodePhase = engine.Phase

func slowIf(p engine.Phase, ctx float64) float64 {
	if p == engine.PhaseDecode && ctx >= 65536 {
		return 1.25
	}
	return 1
}
