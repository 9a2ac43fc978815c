package calibrate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/usage"
)

// CompareSettings names the settings of compare's statistics that SetCompare takes, as
// `calibrate --compare NAME=VALUE` gives them.
const CompareSettings = "fdr, false-alarm, minimum-effect, max-further-trials, max-row-trials, threshold, prior-decode-rate, look"

// SetCompare sets one of the comparisons' settings from "NAME=VALUE" (CompareSettings):
// fdr=Q, false-alarm=RATE (0: off), minimum-effect[=true|false], max-further-trials=N,
// max-row-trials=N (0: no row rerun), threshold=METRIC=PERCENT (repeatable, as compare's
// --threshold), prior-decode-rate=UPTO=PERCENT,…,*=PERCENT (the prior whatever the files say of
// speculative decoding), look=1 (the first look only: the rerun advice is not followed) or 2.
// A mistake is a *usage.Error.
func (s *Settings) SetCompare(kv string) error {
	name, value, hasValue := strings.Cut(kv, "=")
	bad := func(want string) error { return usage.Errorf("--compare %s: want %s", kv, want) }
	th := &s.Thresholds
	var err error
	switch name {
	case "fdr":
		th.FDR, err = strconv.ParseFloat(value, 64)
	case "false-alarm":
		th.FalseAlarm, err = strconv.ParseFloat(value, 64)
	case "minimum-effect":
		th.MinimumEffect = true
		if hasValue {
			th.MinimumEffect, err = strconv.ParseBool(value)
		}
	case "max-further-trials":
		th.MaxFurtherTrials, err = strconv.Atoi(value)
	case "max-row-trials":
		th.MaxRowTrials, err = strconv.Atoi(value)
	case "threshold":
		if err := th.SetThreshold(value); err != nil {
			return usage.Errorf("--compare threshold: %v", err)
		}
	case "prior-decode-rate":
		rates, err := ParseDecodeRatePrior(value)
		if err != nil {
			return usage.Errorf("--compare prior-decode-rate: %v", err)
		}
		th.Prior.DecodeRate = rates
		th.Prior.SpecDecodeRate = rates // the setting sets the prior whatever the files say
	case "look":
		switch value {
		case "1", "2":
			s.TwoLook = value == "2"
		default:
			return bad("look=1 (the first look only) or look=2 (follow the rerun advice)")
		}
	default:
		return bad("NAME=VALUE, NAME one of " + CompareSettings)
	}
	if err != nil || (!hasValue && name != "minimum-effect") {
		return bad(fmt.Sprintf("%s=VALUE with a number (%v)", name, err))
	}
	return nil
}

// Check returns a *usage.Error naming the first setting of s that cannot work.
func (s Settings) Check() error {
	th := s.Thresholds
	switch {
	case s.AA < 0 || s.AB < 0 || s.AA+s.AB == 0:
		return usage.Errorf("--aa and --ab must be non-negative and not both 0")
	case !(s.NoiseScale > 0):
		return usage.Errorf("--noise-scale %v: want a positive factor, 1 for the realistic noise", s.NoiseScale)
	case s.Trials < 1 || s.History < 0:
		return usage.Errorf("--trials must be at least 1 and --history at least 0")
	case !(th.FalseAlarm >= 0 && th.FalseAlarm < 0.5):
		return usage.Errorf("--compare false-alarm=%v: want a rate between 0 and 0.5 (0 turns the cap off)", th.FalseAlarm)
	case th.MaxFurtherTrials < 1 || th.MaxRowTrials < 0:
		return usage.Errorf("--compare max-further-trials must be at least 1 and max-row-trials at least 0")
	case !(th.FDR > 0 && th.FDR < 1):
		return usage.Errorf("--compare fdr=%v: want a false discovery rate between 0 and 1", th.FDR)
	}
	return nil
}

// SetOnly narrows the world's draws from "KIND=LIST" (`calibrate --world --only`): models=…,
// procedures=… or shapes=…, each a comma-separated list of ParseWorldModels', ParseProcedures'
// or ParseShapes' names. A mistake is a *usage.Error.
func (ws *WorldSettings) SetOnly(kv string) error {
	kind, list, _ := strings.Cut(kv, "=")
	var err error
	switch kind {
	case "models":
		ws.Models, err = ParseWorldModels(list)
	case "procedures":
		ws.Procedures, err = ParseProcedures(list)
	case "shapes":
		ws.Shapes, err = ParseShapes(list)
	default:
		return usage.Errorf("--only %s: want models=LIST, procedures=LIST or shapes=LIST", kv)
	}
	if err != nil {
		return usage.Errorf("--only %s: %v", kind, err)
	}
	return nil
}
