package telemetry

// Window is what the server's counters say happened between two snapshots. A figure is absent
// when either snapshot lacks its counters, when a counter went backwards (a server restart), or
// when its denominator did not move.
type Window struct {
	Seconds          float64
	Preemptions      Value
	GenerationTokens Value
	PromptTokens     Value
	// PrefixHitPct is 100 × Δhits ÷ Δqueries.
	PrefixHitPct Value
	// SpecAcceptancePct is 100 × Δaccepted ÷ Δdraft tokens.
	SpecAcceptancePct Value
	// SpecAcceptanceLength is the mean tokens per draft step, 1 + Δaccepted ÷ Δdrafts.
	SpecAcceptanceLength Value
}

// Delta does compute the Window from snapshot a to the later snapshot b.
func Delta(a, b Snapshot) Window {
	w := Window{Seconds: b.At.Sub(a.At).Seconds()}
	w.Preemptions = diff(a.Preemptions, b.Preemptions)
	w.GenerationTokens = diff(a.GenerationTokens, b.GenerationTokens)
	w.PromptTokens = diff(a.PromptTokens, b.PromptTokens)
	w.PrefixHitPct = ratio(diff(a.PrefixHits, b.PrefixHits), diff(a.PrefixQueries, b.PrefixQueries), 100, 0)
	accepted := diff(a.SpecAccepted, b.SpecAccepted)
	w.SpecAcceptancePct = ratio(accepted, diff(a.SpecDraftTokens, b.SpecDraftTokens), 100, 0)
	w.SpecAcceptanceLength = ratio(accepted, diff(a.SpecDrafts, b.SpecDrafts), 1, 1)
	return w
}

// diff does return b − a for a counter, absent when either is absent or it went backwards.
func diff(a, b Value) Value {
	if !a.OK || !b.OK || b.V < a.V {
		return Value{}
	}
	return present(b.V - a.V)
}

// ratio does return offset + scale × num ÷ den, absent when den is absent or zero.
func ratio(num, den Value, scale, offset float64) Value {
	if !num.OK || !den.OK || den.V <= 0 {
		return Value{}
	}
	return present(offset + scale*num.V/den.V)
}
