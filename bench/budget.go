package bench

import (
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// budget accumulates where a run's wall-clock time goes (results.Budget says what each part
// holds). Only the runner's goroutine touches it.
type budget struct {
	start  time.Time
	cpu0   time.Duration
	cpuOK  bool
	setup  time.Duration
	warmup time.Duration // of setup: the context warm-up requests
	scouts time.Duration
	// readiness, windows and drain are the decode trials' parts; admission is the part of
	// readiness the server took to start the requests (results.Budget.AdmissionSeconds).
	readiness, admission, windows, drain time.Duration
	// remeasure is the time spent measuring disturbed windows again (counted in the parts
	// above too); remeasures how many.
	remeasure  time.Duration
	remeasures int
}

// begin starts the budget at now.
func (b *budget) begin(now time.Time) {
	b.start = now
	b.cpu0, b.cpuOK = processCPU()
}

// result returns the budget of a run that ends at end.
func (b *budget) result(end time.Time) *results.Budget {
	wall := end.Sub(b.start)
	parts := b.setup + b.scouts + b.readiness + b.windows + b.drain
	r := &results.Budget{
		WallSeconds:      wall.Seconds(),
		SetupSeconds:     b.setup.Seconds(),
		WarmupSeconds:    b.warmup.Seconds(),
		PrefillSeconds:   b.scouts.Seconds(),
		ReadinessSeconds: b.readiness.Seconds(),
		AdmissionSeconds: b.admission.Seconds(),
		WindowSeconds:    b.windows.Seconds(),
		DrainSeconds:     b.drain.Seconds(),
		OtherSeconds:     max(wall-parts, 0).Seconds(),
		RemeasureSeconds: b.remeasure.Seconds(),
		Remeasures:       b.remeasures,
	}
	r.Ratios()
	if cpu, ok := processCPU(); ok && b.cpuOK {
		r.CPUSeconds = ptr(max(cpu-b.cpu0, 0).Seconds())
	}
	return r
}

// since adds the time from began to now to *d.
func (s *session) since(d *time.Duration, began time.Time) {
	*d += s.now().Sub(began)
}

// phase tells a PhaseProgress which phase a decode trial is in.
func (s *session) phase(id results.CellID, phase string) {
	if p, ok := s.progress.(PhaseProgress); ok {
		p.Phase(id, phase)
	}
}
