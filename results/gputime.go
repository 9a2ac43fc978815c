package results

// GPUTime is the GPU wall time one job spent, by phase, against its budget, and what deciding
// the cells it left undecided would cost. The simulator's "GPU time" is the job's wall time.
type GPUTime struct {
	// BudgetSeconds is the job's budget (speedmatrix.yaml budget, run --budget); 0 when none.
	BudgetSeconds float64 `json:"budget_seconds,omitempty"`
	// BuildSeconds is building the engine (engine.build); LoadSeconds starting the server until
	// it answered (engine.serve); both 0 when the job measured a server it did not start.
	BuildSeconds float64 `json:"build_seconds"`
	LoadSeconds  float64 `json:"load_seconds"`
	// MeasureSeconds is the first pass (the run's own wall time); RerunSeconds the adaptive
	// reruns after it, each measured like a run.
	MeasureSeconds float64 `json:"measure_seconds"`
	RerunSeconds   float64 `json:"rerun_seconds"`
	// TotalSeconds is the sum of the phases.
	TotalSeconds float64 `json:"total_seconds"`
	// Reruns is how many rerun measurements (a cell or a decode row, each its advised trials)
	// were made.
	Reruns int `json:"reruns,omitempty"`
	// Undecided are the cells (or rows) still inconclusive, each with what deciding it would
	// cost.
	Undecided []UndecidedCost `json:"undecided,omitempty"`
}

// Add adds o's phases, budget, reruns and undecided cells to g (GPU time spent one after
// another: shards, or the two sides of a paired run) and sets TotalSeconds; a nil o adds nothing.
func (g *GPUTime) Add(o *GPUTime) {
	if o != nil {
		g.BudgetSeconds += o.BudgetSeconds
		g.BuildSeconds += o.BuildSeconds
		g.LoadSeconds += o.LoadSeconds
		g.MeasureSeconds += o.MeasureSeconds
		g.RerunSeconds += o.RerunSeconds
		g.Reruns += o.Reruns
		g.Undecided = append(g.Undecided, o.Undecided...)
	}
	g.Sum()
}

// Sum sets TotalSeconds to the sum of the phases and returns it.
func (g *GPUTime) Sum() float64 {
	g.TotalSeconds = g.BuildSeconds + g.LoadSeconds + g.MeasureSeconds + g.RerunSeconds
	return g.TotalSeconds
}

// Why an UndecidedCost is undecided.
const (
	// UndecidedOverBudget: its advised trials cost more than the budget had left.
	UndecidedOverBudget = "over_budget"
	// UndecidedNoTrials: no number of trials within the advice's limit decides it.
	UndecidedNoTrials = "no_trials_decide"
	// UndecidedSecondLook: measured again, and still inconclusive at the second look, which is
	// the last the sequential rule allows.
	UndecidedSecondLook = "second_look"
)

// UndecidedCost is one cell (or decode context row) left undecided, with the price of deciding
// it.
type UndecidedCost struct {
	// Cell is the cell's CellID string; for a row, the --cells list of the row's cells.
	Cell string `json:"cell"`
	// Row is the decode context label when the entry is a whole row.
	Row     string   `json:"row,omitempty"`
	Metrics []Metric `json:"metrics,omitempty"`
	// FurtherTrials is the advised number of further trials per side; CostSeconds their
	// predicted GPU time. Both 0 when unknown (Reason UndecidedNoTrials or UndecidedSecondLook).
	FurtherTrials int     `json:"further_trials,omitempty"`
	CostSeconds   float64 `json:"cost_seconds,omitempty"`
	// Reason is one of the Undecided* constants.
	Reason string `json:"reason"`
}
