package results

// UndecidableNeedsBase is the UndecidableItem.Reason (and the UndecidedCost.Reason) of a
// cell-metric that the advice would decide by measuring both sides, but not by head trials
// alone: the base's stored runs are too few or too noisy for any number of head trials to bring
// the comparison's standard error down to what 2δ needs. Rerun the base too, or use paired mode.
const (
	UndecidableNeedsBase = "needs_base_reruns"
	UndecidedNeedsBase   = UndecidableNeedsBase
)
