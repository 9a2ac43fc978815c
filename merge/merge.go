package merge

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// The reasons Shards refuses; every refusal wraps one.
var (
	ErrNotShard  = errors.New("not a shard")
	ErrPlan      = errors.New("shards of different plans")
	ErrDuplicate = errors.New("duplicate shard or cell")
	ErrMissing   = errors.New("missing shards")
	ErrEngine    = errors.New("different engines")
	ErrHardware  = errors.New("different hardware")
	ErrConfig    = errors.New("different configurations")
	ErrServer    = errors.New("different servers")
	// ErrSpecDecode: one shard served with speculative acceptance pinned and another not, or
	// pinned at another length (fields.go).
	ErrSpecDecode = errors.New("different speculative-decoding setups")
)

// Input is one shard's results file and the name it is known by (its path).
type Input struct {
	Name string
	File *results.File
}

// Options tune Shards.
type Options struct {
	// AllowPartial merges the shards there are when some are missing; the result is marked
	// partial and names them.
	AllowPartial bool
}

// Shards joins the shards of one plan into one results file (see the package doc), or says
// why it cannot. The inputs are not modified.
func Shards(in []Input, opts Options) (*results.File, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: no files to merge; pass every shard's results file", ErrMissing)
	}
	for _, s := range in {
		if s.File == nil || s.File.Run.Shard == nil {
			return nil, fmt.Errorf("%w: %s holds no run.shard, so it is not one shard of a sharded run; merge joins the files of `speedmatrix run --shard K/N`", ErrNotShard, s.Name)
		}
	}
	in = slices.Clone(in)
	slices.SortStableFunc(in, func(a, b Input) int { return cmp.Compare(a.File.Run.Shard.Index, b.File.Run.Shard.Index) })
	ref := in[0]
	rs := ref.File.Run.Shard
	have := map[int]string{}
	for _, s := range in {
		sh := s.File.Run.Shard
		if sh.Plan != rs.Plan || sh.Count != rs.Count {
			return nil, fmt.Errorf("%w: %s is shard %s of plan %s, %s shard %s of plan %s; merge the shards of one plan (the same settings and --shards for plan and every run)",
				ErrPlan, ref.Name, rs, rs.Plan, s.Name, sh, sh.Plan)
		}
		if other, dup := have[sh.Index]; dup {
			return nil, fmt.Errorf("%w: shard %s is both %s and %s; pass each shard once", ErrDuplicate, sh, other, s.Name)
		}
		have[sh.Index] = s.Name
	}
	for _, s := range in[1:] {
		if err := sameRun(ref, s); err != nil {
			return nil, err
		}
	}
	var missing []string
	for k := 1; k <= rs.Count; k++ {
		if _, ok := have[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, rs.Count))
		}
	}
	if len(missing) > 0 && !opts.AllowPartial {
		return nil, fmt.Errorf("%w: shard %s of plan %s not given (have %d of %d); pass every shard's file, or --allow-partial to merge these and mark the result partial",
			ErrMissing, strings.Join(missing, ", "), rs.Plan, len(in), rs.Count)
	}
	return join(in, missing)
}

// sameRun returns why shard s cannot belong to the same run as ref, or nil.
func sameRun(ref, s Input) error {
	a, b := ref.File, s.File
	differ := func(sentinel error, what, x, y string) error {
		return fmt.Errorf("%w: %s is %q in %s but %q in %s; merge shards measured with one engine build on one kind of machine and one configuration",
			sentinel, what, x, ref.Name, y, s.Name)
	}
	for _, f := range []struct{ what, x, y string }{
		{"engine commit", a.Engine.Commit, b.Engine.Commit},
		{"engine name", a.Engine.Name, b.Engine.Name},
		{"engine version", a.Engine.Version, b.Engine.Version},
		{"engine build", a.Engine.Build, b.Engine.Build},
		{"engine quantization", a.Engine.Quantization, b.Engine.Quantization},
		{"engine backend", a.Engine.Backend, b.Engine.Backend},
	} {
		if f.x != f.y {
			return differ(ErrEngine, f.what, f.x, f.y)
		}
	}
	ha, hb := a.Hardware, b.Hardware
	for _, f := range []struct{ what, x, y string }{
		{"GPU", ha.GPU, hb.GPU},
		{"GPU count", fmt.Sprint(ha.GPUCount), fmt.Sprint(hb.GPUCount)},
		{"memory per GPU (GB)", fmt.Sprint(ha.VRAMPerGPUGB), fmt.Sprint(hb.VRAMPerGPUGB)},
		{"GPU driver", ha.Driver, hb.Driver},
		{"CUDA version", ha.CUDA, hb.CUDA},
		{"GPU power limit (W)", fmt.Sprint(ha.PowerLimitW), fmt.Sprint(hb.PowerLimitW)},
		{"clocks locked", fmt.Sprint(ha.ClocksLocked), fmt.Sprint(hb.ClocksLocked)},
	} {
		if f.x != f.y {
			return differ(ErrHardware, "hardware "+f.what, f.x, f.y)
		}
	}
	if ia, ib := store.ConfigID(a), store.ConfigID(b); ia != ib {
		what := "config id"
		x, y := ia, ib
		for _, f := range []struct{ what, x, y string }{
			{"served model", a.Run.ServedModel, b.Run.ServedModel},
			{"model revision", a.Run.Revision, b.Run.Revision},
			{"launch command", a.Run.LaunchCommand, b.Run.LaunchCommand},
			{"time scale", fmt.Sprint(a.TimeScale()), fmt.Sprint(b.TimeScale())},
			{"settings", settingsText(a), settingsText(b)},
		} {
			if f.x != f.y {
				what, x, y = fmt.Sprintf("the %s (config id %s vs %s)", f.what, ia, ib), f.x, f.y
				break
			}
		}
		return differ(ErrConfig, what, x, y)
	}
	if x, y := settingsText(a), settingsText(b); x != y {
		return differ(ErrConfig, "run.settings", x, y)
	}
	if x, y := maxModelLen(a), maxModelLen(b); x != y {
		return differ(ErrServer, "the server's max_model_len", fmt.Sprint(x), fmt.Sprint(y))
	}
	return sameSetup(ref, s) // fields.go
}

// settingsText returns the run's settings as JSON without what differs between the shards of
// one run: the URL (each runner serves its own) and the simulator's seed.
func settingsText(f *results.File) string {
	if f.Run.Settings == nil {
		return "null"
	}
	s := *f.Run.Settings
	s.URL = ""
	if s.Simulator != nil {
		sim := *s.Simulator
		sim.Seed = 0
		s.Simulator = &sim
	}
	data, _ := json.Marshal(s)
	return string(data)
}

func maxModelLen(f *results.File) int {
	if f.Server == nil {
		return 0
	}
	return f.Server.MaxModelLen
}

// join builds the merged file of shards already checked, sorted by index.
func join(in []Input, missing []string) (*results.File, error) {
	ref := in[0].File
	out := &results.File{
		Schema:   ref.Schema,
		Hardware: ref.Hardware,
		Engine:   ref.Engine,
		Run:      ref.Run,
		Prefill:  []results.PrefillCell{},
		Decode:   []results.DecodeCell{},
	}
	out.Run.Shard = nil
	out.Hardware.OtherGPUProcesses = slices.Clone(ref.Hardware.OtherGPUProcesses)
	out.Run.Partial, out.Run.PartialReason = false, ""
	out.Run.Extra = slices.Clone(ref.Run.Extra)
	if ref.Run.ID != "" {
		out.Run.ID = ref.Run.ID + "-merged"
	}
	if ref.Server != nil {
		srv := *ref.Server
		out.Server = &srv
	}
	if ref.Run.Settings != nil {
		st := *ref.Run.Settings
		out.Run.Settings = &st
	}
	var partial, ids []string
	where := map[results.CellID]string{}
	addNote := func(n string) {
		if !slices.Contains(out.Notes, n) {
			out.Notes = append(out.Notes, n)
		}
	}
	var budgets []*results.Budget
	for _, s := range in {
		f := s.File
		ids = append(ids, f.Run.ID)
		claim := func(id results.CellID) error { // a cell belongs to one shard
			if other, dup := where[id]; dup {
				return fmt.Errorf("%w: cell %s is in both %s and %s; a cell belongs to one shard", ErrDuplicate, id, other, s.Name)
			}
			where[id] = s.Name
			return nil
		}
		for _, c := range f.Prefill {
			if err := claim(c.ID()); err != nil {
				return nil, err
			}
			out.Prefill = append(out.Prefill, c)
		}
		for _, c := range f.Decode {
			if err := claim(c.ID()); err != nil {
				return nil, err
			}
			out.Decode = append(out.Decode, c)
		}
		for _, n := range f.Notes {
			addNote(n)
		}
		if f.Run.Partial {
			partial = append(partial, fmt.Sprintf("shard %s: %s", f.Run.Shard, cmp.Or(f.Run.PartialReason, "partial")))
		}
		if !f.Run.Start.IsZero() && (out.Run.Start.IsZero() || f.Run.Start.Before(out.Run.Start)) {
			out.Run.Start = f.Run.Start
		}
		if f.Run.End.After(out.Run.End) {
			out.Run.End = f.Run.End
		}
		budgets = append(budgets, f.Run.Budget)
		if f.Server != nil && f.Server.Tokenizer == "estimate" && out.Server != nil {
			out.Server.Tokenizer = "estimate"
		}
		for _, p := range f.Hardware.OtherGPUProcesses {
			if !slices.Contains(out.Hardware.OtherGPUProcesses, p) {
				out.Hardware.OtherGPUProcesses = append(out.Hardware.OtherGPUProcesses, p)
			}
		}
		if f.Server != nil && out.Server != nil && f.Server.KVCacheTokens != out.Server.KVCacheTokens {
			addNote(fmt.Sprintf("the shards' servers had different KV caches (%d tokens in %s, %d in %s): cells over capacity on one could fit on another",
				ref.Server.KVCacheTokens, in[0].Name, f.Server.KVCacheTokens, s.Name))
		}
	}
	// A single run measures context by context, ascending; each shard did the same for its rows.
	slices.SortStableFunc(out.Prefill, func(a, b results.PrefillCell) int { return cmp.Compare(a.Context, b.Context) })
	slices.SortStableFunc(out.Decode, func(a, b results.DecodeCell) int { return cmp.Compare(a.Context, b.Context) })
	out.Run.Budget = sumBudgets(budgets)
	rs := ref.Run.Shard
	addNote(fmt.Sprintf("merged from %d of %d shards of plan %s (runs %s), each measured on its own server: every context row's cells on one server",
		len(in), rs.Count, rs.Plan, strings.Join(ids, ", ")))
	if len(missing) > 0 {
		partial = append(partial, fmt.Sprintf("shard %s of plan %s not merged (missing)", strings.Join(missing, ", "), rs.Plan))
	}
	if len(partial) > 0 {
		out.Run.Partial, out.Run.PartialReason = true, strings.Join(partial, "; ")
	}
	if err := joinFields(out, in); err != nil { // fields.go
		return nil, err
	}
	if err := results.Validate(out); err != nil {
		return nil, fmt.Errorf("the merged file is not valid (a bug; please report it): %w", err)
	}
	return out, nil
}

// sumBudgets adds the shards' budgets: the GPU time of the whole run on all its runners. It is
// nil when no shard has one; the CPU time only when every shard has it.
func sumBudgets(bs []*results.Budget) *results.Budget {
	out := results.SumBudgets(bs...)
	if out != nil && slices.Contains(bs, nil) {
		out.CPUSeconds = nil
	}
	return out
}
