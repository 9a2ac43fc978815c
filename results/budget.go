package results

// Ratios does set the budget's two wall-time ratios (WallPerMeasured, WallPerServerBound) from
// its parts; a ratio whose denominator is zero is left at zero, and WallPerServerBound also when
// the budget holds no warm-up or admission time (a file written before they were recorded).
func (b *Budget) Ratios() {
	b.WallPerMeasured, b.WallPerServerBound = 0, 0
	if m := b.WindowSeconds + b.PrefillSeconds; m > 0 {
		b.WallPerMeasured = b.WallSeconds / m
	}
	if m := b.WindowSeconds + b.PrefillSeconds + b.WarmupSeconds + b.AdmissionSeconds; m > 0 && b.WarmupSeconds+b.AdmissionSeconds > 0 {
		b.WallPerServerBound = b.WallSeconds / m
	}
}

// SumBudgets returns the sum of the budgets of runs measured one after another (shards, or the
// blocks of a paired run), nil ones skipped; nil when all are. Its CPU time is the sum only
// when every budget has one.
func SumBudgets(bs ...*Budget) *Budget {
	var out *Budget
	var cpu float64
	cpuAll := true
	for _, b := range bs {
		if b == nil {
			continue
		}
		if out == nil {
			out = &Budget{}
		}
		out.WallSeconds += b.WallSeconds
		out.SetupSeconds += b.SetupSeconds
		out.WarmupSeconds += b.WarmupSeconds
		out.PrefillSeconds += b.PrefillSeconds
		out.ReadinessSeconds += b.ReadinessSeconds
		out.AdmissionSeconds += b.AdmissionSeconds
		out.WindowSeconds += b.WindowSeconds
		out.DrainSeconds += b.DrainSeconds
		out.OtherSeconds += b.OtherSeconds
		out.CPUIncludesServer = out.CPUIncludesServer || b.CPUIncludesServer
		if b.CPUSeconds == nil {
			cpuAll = false
		} else {
			cpu += *b.CPUSeconds
		}
	}
	if out == nil {
		return nil
	}
	out.Ratios()
	if cpuAll {
		out.CPUSeconds = &cpu
	}
	return out
}
