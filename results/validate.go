package results

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// maxErrors bounds how many problems Validate lists before it stops.
const maxErrors = 20

// ValidationError lists every problem found in a results or comparison file, each naming the
// field and cell.
type ValidationError struct {
	// File names the format: "results" or "comparison" (empty means results).
	File     string
	Problems []string
}

func (e *ValidationError) Error() string {
	what := e.File
	if what == "" {
		what = "results"
	}
	if len(e.Problems) == 1 {
		return "invalid " + what + " file: " + e.Problems[0]
	}
	return fmt.Sprintf("invalid %s file (%d problems):\n  %s", what, len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// validator collects problems.
type validator struct {
	problems []string
}

func (v *validator) addf(format string, args ...any) {
	if len(v.problems) < maxErrors {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	} else if len(v.problems) == maxErrors {
		v.problems = append(v.problems, "… more problems not listed")
	}
}

// number checks one optional number.
func (v *validator) number(where, field string, p *float64) {
	if p != nil {
		v.value(where, field, *p)
	}
}

// value checks one number: finite and not negative.
func (v *validator) value(where, field string, x float64) {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		v.addf("%s: %s is %v; write null for a number that does not exist", where, field, x)
	case x < 0:
		v.addf("%s: %s is negative (%v)", where, field, x)
	}
}

// Plausibility bounds. A number beyond them is a mistake (a unit or an edit), not a
// measurement: every stage would have to render or compare it as if it were one.
const (
	// maxTokPerS bounds every rate: ten million tokens a second is far beyond any server of
	// today (the reference's fastest prefill is 17K tok/s per request, its fastest decode cell
	// 10K tok/s).
	maxTokPerS = 1e7
	// maxMillis bounds every latency: a day.
	maxMillis = 24 * 60 * 60 * 1000
	// maxSeconds bounds every window and measurement length: a day.
	maxSeconds = 24 * 60 * 60
)

// bounded checks one number like value and that it is at most limit (unit names the unit).
func (v *validator) bounded(where, field string, x, limit float64, unit string) {
	v.value(where, field, x)
	if x > limit {
		v.addf("%s: %s is %.6g %s, above the plausible maximum %.6g %s; is it in the wrong unit?", where, field, x, unit, limit, unit)
	}
}

// rate, millis and seconds check an optional rate, latency or duration.
func (v *validator) rate(where, field string, p *float64) {
	if p != nil {
		v.bounded(where, field, *p, maxTokPerS, "tok/s")
	}
}

func (v *validator) millis(where, field string, p *float64) {
	if p != nil {
		v.bounded(where, field, *p, maxMillis, "ms")
	}
}

func (v *validator) seconds(where, field string, p *float64) {
	if p != nil {
		v.bounded(where, field, *p, maxSeconds, "s")
	}
}

// count checks one optional count.
func (v *validator) count(where, field string, p *int) {
	if p != nil && *p < 0 {
		v.addf("%s: %s is negative (%d)", where, field, *p)
	}
}

// Validate checks f and returns a *ValidationError listing every problem, or nil.
func Validate(f *File) error {
	v := &validator{}
	if f.Schema != SchemaV1 {
		if f.Schema == "" {
			v.addf("schema: missing; a results file starts with \"schema\": %q", SchemaV1)
		} else {
			v.addf("schema: unknown version %q; this speedmatrix reads %q (a newer file needs a newer speedmatrix)", f.Schema, SchemaV1)
		}
		return &ValidationError{Problems: v.problems}
	}
	switch f.Run.Source {
	case SourceMeasured, SourceImported:
	default:
		v.addf("run.source: %q is neither %q nor %q", f.Run.Source, SourceMeasured, SourceImported)
	}
	if f.Run.Tool.Name == "" {
		v.addf("run.tool.name: missing; name the program that measured the run")
	}
	v.bounded("run", "seconds_per_measurement", f.Run.SecondsPerMeasurement, maxSeconds, "s")
	validateTimeScale(v, f)
	validateFingerprint(v, &f.Hardware)
	v.validateShard(f.Run.Shard)
	if f.Run.MaxOutputTokens < 0 {
		v.addf("run: max_output_tokens is negative (%d)", f.Run.MaxOutputTokens)
	}
	if !f.Run.Start.IsZero() && !f.Run.End.IsZero() && f.Run.End.Before(f.Run.Start) {
		v.addf("run: end %s is before start %s", f.Run.End.Format("2006-01-02T15:04:05Z07:00"), f.Run.Start.Format("2006-01-02T15:04:05Z07:00"))
	}
	if f.Run.PartialReason != "" && !f.Run.Partial {
		v.addf("run: partial_reason is set but partial is false")
	}
	validatePairing(v, f) // pairing.go
	v.value("hardware", "vram_per_gpu_gb", f.Hardware.VRAMPerGPUGB)
	if f.Hardware.GPUCount < 0 {
		v.addf("hardware: gpu_count is negative (%d)", f.Hardware.GPUCount)
	}
	seen := map[CellID]int{}
	for i := range f.Prefill {
		c := &f.Prefill[i]
		where := fmt.Sprintf("prefill cell %s (prefill[%d])", c.ContextLabel, i)
		v.cellIdentity(where, c.Context, c.ContextLabel, 1)
		if j, dup := seen[c.ID()]; dup {
			v.addf("%s: duplicate of prefill[%d]; each cell appears once (trials go in its trials list)", where, j)
		}
		seen[c.ID()] = i
		v.prefill(where, c)
	}
	for i := range f.Decode {
		c := &f.Decode[i]
		where := fmt.Sprintf("decode cell %s×%d (decode[%d])", c.ContextLabel, c.Concurrency, i)
		v.cellIdentity(where, c.Context, c.ContextLabel, c.Concurrency)
		if j, dup := seen[c.ID()]; dup {
			v.addf("%s: duplicate of decode[%d]; each cell appears once (trials go in its trials list)", where, j)
		}
		seen[c.ID()] = i
		v.decode(where, c)
	}
	v.specDecode(f.SpecDecode)
	if len(v.problems) > 0 {
		return &ValidationError{Problems: v.problems}
	}
	return nil
}

// cellIdentity checks the fields that identify a cell.
func (v *validator) cellIdentity(where string, context int, label string, concurrency int) {
	if context <= 0 {
		v.addf("%s: context must be a positive number of tokens, not %d", where, context)
	} else if want := ContextLabel(context); label != want {
		v.addf("%s: context_label %q does not match context %d (want %q)", where, label, context, want)
	}
	if concurrency < 1 {
		v.addf("%s: concurrency must be at least 1, not %d", where, concurrency)
	}
}

// status checks the status field and the error reason that goes with it.
func (v *validator) status(where string, s Status, reason string) {
	switch s {
	case StatusValid, StatusQueued, StatusOverCapacity, StatusSkipped:
	case StatusError:
		if reason == "" {
			v.addf("%s: status error without its reason; set error to what failed", where)
		}
	case "":
		v.addf("%s: status missing", where)
	default:
		v.addf("%s: status %q unknown (want valid, queued, over_capacity, error or skipped)", where, s)
	}
}

// presence checks that a measured status has its numbers and other statuses have none.
func (v *validator) presence(where string, s Status, fields []string, present []bool) {
	for i, f := range fields {
		switch {
		case s.Measured() && !present[i]:
			v.addf("%s: status %s without %s; a measured cell needs its numbers", where, s, f)
		case !s.Measured() && s != "" && present[i]:
			v.addf("%s: status %s carries %s; a cell that was not measured has null numbers", where, s, f)
		}
	}
}

func (v *validator) prefill(where string, c *PrefillCell) {
	v.status(where, c.Status, c.Error)
	v.presence(where, c.Status, []string{"prompt_tok_per_s", "ttft_ms"}, []bool{c.PromptTokPerS != nil, c.TTFTMs != nil})
	v.rate(where, "prompt_tok_per_s", c.PromptTokPerS)
	v.millis(where, "ttft_ms", c.TTFTMs)
	v.count(where, "prompt_tokens", c.PromptTokens)
	v.count(where, "completed_requests", c.CompletedRequests)
	if c.SummaryOnly && len(c.Trials) > 0 {
		v.addf("%s: summary_only but carries %d trials", where, len(c.Trials))
	}
	for i, t := range c.Trials {
		tw := fmt.Sprintf("%s trial %d", where, i+1)
		v.bounded(tw, "ttft_ms", t.TTFTMs, maxMillis, "ms")
		v.bounded(tw, "prompt_tok_per_s", t.PromptTokPerS, maxTokPerS, "tok/s")
		v.bounded(tw, "client_queue_ms", t.ClientQueueMs, maxMillis, "ms")
		if t.PromptTokens < 0 {
			v.addf("%s: prompt_tokens is negative (%d)", tw, t.PromptTokens)
		}
		if t.PrefixCacheHitTokens != nil && *t.PrefixCacheHitTokens < 0 {
			v.addf("%s: prefix_cache_hit_tokens is negative (%d)", tw, *t.PrefixCacheHitTokens)
		}
	}
	v.prefillAgrees(where, c)
}

func (v *validator) decode(where string, c *DecodeCell) {
	v.status(where, c.Status, c.Error)
	m := &c.DecodeMetrics
	v.presence(where, c.Status,
		[]string{"total_tok_per_s", "output_tokens", "measured_seconds"},
		[]bool{m.TotalTokPerS != nil, m.OutputTokens != nil, m.MeasuredSeconds != nil})
	if c.Status == StatusError && m.TotalTokPerS != nil {
		v.addf("%s: status error carries total_tok_per_s; a failed cell's throughput is null", where)
	}
	v.metrics(where, m)
	if c.SummaryOnly && len(c.Trials) > 0 {
		v.addf("%s: summary_only but carries %d trials", where, len(c.Trials))
	}
	for i := range c.Trials {
		t := &c.Trials[i]
		tw := fmt.Sprintf("%s trial %d", where, i+1)
		v.metrics(tw, &t.DecodeMetrics)
		v.bounded(tw, "window_seconds", t.WindowSeconds, maxSeconds, "s")
		if t.BinSeconds <= 0 || math.IsNaN(t.BinSeconds) || math.IsInf(t.BinSeconds, 0) {
			v.addf("%s: bin_seconds must be positive, not %v", tw, t.BinSeconds)
		} else if want := int(math.Ceil(t.WindowSeconds/t.BinSeconds - 1e-9)); len(t.BinOutputTokens) != want {
			v.addf("%s: %d bin_output_tokens for a %.3g s window of %.3g s bins (want %d)", tw, len(t.BinOutputTokens), t.WindowSeconds, t.BinSeconds, want)
		}
		for j, n := range t.BinOutputTokens {
			if n < 0 {
				v.addf("%s: bin_output_tokens[%d] is negative (%d)", tw, j, n)
			}
		}
		for j, r := range t.Requests {
			rw := fmt.Sprintf("%s request %d", tw, j+1)
			v.millis(rw, "ttft_ms", r.TTFTMs)
			v.millis(rw, "tbt_ms", r.TBTMs)
			v.bounded(rw, "client_queue_ms", r.ClientQueueMs, maxMillis, "ms")
			if r.OutputTokens < 0 || r.Chunks < 0 {
				v.addf("%s: output_tokens and chunks must not be negative", rw)
			}
		}
		for j, x := range t.RunningSamples {
			v.value(tw, fmt.Sprintf("running_samples[%d]", j), x)
		}
		for j, x := range t.WaitingSamples {
			v.value(tw, fmt.Sprintf("waiting_samples[%d]", j), x)
		}
	}
	for i := range c.Disturbed {
		d := &c.Disturbed[i]
		dw := fmt.Sprintf("%s disturbed window %d", where, i+1)
		switch d.Used {
		case UsedRemeasure, UsedUndisturbedBins, UsedDisturbed:
		default:
			v.addf("%s: used %q: want %s, %s or %s", dw, d.Used, UsedRemeasure, UsedUndisturbedBins, UsedDisturbed)
		}
		if k := d.Disturbance.Kind; k != DisturbStall && k != DisturbStep {
			v.addf("%s: kind %q: want %s or %s", dw, k, DisturbStall, DisturbStep)
		}
		if b := d.Disturbance; b.FirstBin < 0 || b.FirstBin > b.LastBin || b.LastBin >= len(d.Trial.BinOutputTokens) {
			v.addf("%s: bins %d–%d outside its %d bins", dw, b.FirstBin, b.LastBin, len(d.Trial.BinOutputTokens))
		}
		v.metrics(dw, &d.Trial.DecodeMetrics)
	}
	if c.Order < 0 {
		v.addf("%s: order %d must not be negative", where, c.Order)
	}
	v.decodeAgrees(where, c)
}

func (v *validator) metrics(where string, m *DecodeMetrics) {
	v.rate(where, "total_tok_per_s", m.TotalTokPerS)
	v.rate(where, "per_request_tok_per_s", m.PerRequestTokPerS)
	v.millis(where, "ttft_ms", m.TTFTMs)
	v.millis(where, "tbt_ms", m.TBTMs)
	v.number(where, "avg_active_requests", m.AvgActiveRequests)
	v.seconds(where, "measured_seconds", m.MeasuredSeconds)
	v.millis(where, "inter_chunk_ms", m.InterChunkMs)
	v.millis(where, "client_queue_ms", m.ClientQueueMs)
	v.count(where, "completed_requests", m.CompletedRequests)
	v.count(where, "output_tokens", m.OutputTokens)
	if t := m.Telemetry; t != nil {
		for _, n := range []struct {
			name string
			p    *float64
		}{
			{"telemetry.max_running", t.MaxRunning}, {"telemetry.max_waiting", t.MaxWaiting},
			{"telemetry.max_kv_cache_usage", t.MaxKVCacheUsage}, {"telemetry.preemptions", t.Preemptions},
			{"telemetry.prefix_cache_hit_pct", t.PrefixCacheHitPct}, {"telemetry.spec_acceptance_pct", t.SpecAcceptancePct},
			{"telemetry.spec_acceptance_length", t.SpecAcceptanceLength},
		} {
			v.number(where, n.name, n.p)
		}
	}
}

// IsValidation reports whether err is (or wraps) a *ValidationError.
func IsValidation(err error) bool {
	var ve *ValidationError
	return errors.As(err, &ve)
}
