package results

// What a comparison knew about speculative decoding (ComparisonSettings.SpecDecode), which
// chooses the prior of decode rates: acceptance that changes from run to run moves decode speed
// at low concurrency far more than the engine's own noise (vllm-project/vllm issue 53436).
const (
	// SpecDecodeUnpinned: a side's server counted speculative drafts (acceptance in its
	// telemetry) and its matrix was served with acceptance as launched.
	SpecDecodeUnpinned = "unpinned"
	// SpecDecodeUnknown: a side's files cannot tell (no server counters were read: an imported
	// file, or a server whose /metrics was not scraped); any engine may serve speculative
	// decoding, so it is taken as unpinned.
	SpecDecodeUnknown = "unknown"
	// SpecDecodeOff: every side's server counters were read and none counted a speculative
	// draft (and no side was pinned).
	SpecDecodeOff = "off"
	// SpecDecodePinned (spec_decode.mode) also names a comparison whose sides were all pinned,
	// or pinned on one side and without speculative decoding on the other.
)

// SpecDecodeState returns what f says about speculative decoding in its matrix:
// SpecDecodePinned, SpecDecodeUnpinned (a decode cell or trial with speculative acceptance in
// its telemetry), SpecDecodeOff (server counters read, none of them speculative) or
// SpecDecodeUnknown.
func (f *File) SpecDecodeState() string {
	if f.Pinned() {
		return SpecDecodePinned
	}
	counters := false
	see := func(t *Telemetry) bool {
		if t == nil || t.Source != "server" {
			return false
		}
		if t.SpecAcceptanceLength != nil || t.SpecAcceptancePct != nil {
			return true
		}
		if t.Preemptions != nil || t.PrefixCacheHitPct != nil {
			counters = true
		}
		return false
	}
	for i := range f.Decode {
		c := &f.Decode[i]
		if see(c.Telemetry) {
			return SpecDecodeUnpinned
		}
		for j := range c.Trials {
			if see(c.Trials[j].Telemetry) {
				return SpecDecodeUnpinned
			}
		}
	}
	if counters {
		return SpecDecodeOff
	}
	return SpecDecodeUnknown
}
