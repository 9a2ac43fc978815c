package merge

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// The fields of results.File beyond the cells, the engine, the GPU and the configuration that
// sameRun and join check, and what merging does with each:
//
//   - refused when they differ: the speculative-decoding setup (spec_decode: pinned or not, the
//     pinned length and where it came from), the speedmatrix that measured (tool name and
//     version), the run's source, decode test and prefill mode, the engine's repository and
//     merge-base, clocks locked at other values, the server's version and max_num_seqs, a paired
//     run's scheme, side, blocks and order;
//   - merged: the acceptance pass's cells (every shard measured its own rows' cells), the GPU
//     time phase by phase (unknown when a shard has none), the pairing ids (joined in shard
//     order, so that the merged base and head sides of a sharded paired run still pair), the
//     extra facts of the hardware, the engine and the run (each once), the persistence mode
//     ("mixed" when the runners differ);
//   - kept from shard 1 with a note naming the shards when they differ: the GPU type, the CPU
//     model, the OS, clocks that were not locked, the server's metrics source and block size.

// sameSetup returns why shard s cannot belong to the same run as ref for a reason sameRun does
// not check, or nil.
func sameSetup(ref, s Input) error {
	a, b := ref.File, s.File
	differ := func(sentinel error, what, x, y, do string) error {
		return fmt.Errorf("%w: %s is %q in %s but %q in %s; %s", sentinel, what, x, ref.Name, y, s.Name, do)
	}
	if x, y := specText(a), specText(b); x != y {
		return differ(ErrSpecDecode, "speculative decoding", x, y,
			"serve every shard with the same spec_decode (a length pinned from each runner's own acceptance pass differs from runner to runner: set spec_decode.acceptance_length to pin one)")
	}
	const same = "merge shards measured with one engine build on one kind of machine and one configuration"
	for _, f := range []struct {
		sentinel error
		what     string
		x, y     string
	}{
		{ErrConfig, "the speedmatrix", toolText(a.Run.Tool), toolText(b.Run.Tool)},
		{ErrConfig, "the run's source", a.Run.Source, b.Run.Source},
		{ErrConfig, "the decode test", a.Run.DecodeTest, b.Run.DecodeTest},
		{ErrConfig, "the prefill mode", a.Run.PrefillMode, b.Run.PrefillMode},
		{ErrConfig, "the pairing", pairingText(a.Run.Pairing), pairingText(b.Run.Pairing)},
		{ErrEngine, "engine repository", a.Engine.Repository, b.Engine.Repository},
		{ErrEngine, "engine merge-base", a.Engine.MergeBase, b.Engine.MergeBase},
		{ErrHardware, "hardware locked clocks", lockedClocks(a.Hardware), lockedClocks(b.Hardware)},
		{ErrServer, "the server's version", server(a).Version, server(b).Version},
		{ErrServer, "the server's max_num_seqs", strconv.Itoa(server(a).MaxNumSeqs), strconv.Itoa(server(b).MaxNumSeqs)},
	} {
		if f.x != f.y {
			do := same
			if f.sentinel == ErrConfig && f.what == "the speedmatrix" {
				do = "plan, every shard and merge must be one speedmatrix version"
			}
			return differ(f.sentinel, f.what, f.x, f.y, do)
		}
	}
	return nil
}

// specText says how f's matrix was served with speculative decoding.
func specText(f *results.File) string {
	s := f.SpecDecode
	switch {
	case s == nil:
		return "as launched"
	case s.Mode != results.SpecDecodePinned:
		return "mode " + s.Mode
	}
	t := "pinned at " + strconv.FormatFloat(s.PinnedAcceptanceLength, 'f', -1, 64) + " tokens per draft step"
	if s.PinnedFrom == results.PinnedFromAcceptance {
		t += ", from the acceptance pass"
	}
	return t
}

func toolText(t results.Tool) string { return strings.TrimSpace(t.Name + " " + t.Version) }

// pairingText is a paired side without its id (each shard's paired run has its own).
func pairingText(p *results.Pairing) string {
	if p == nil {
		return "not paired"
	}
	return fmt.Sprintf("%s side of a %s pairing of %d blocks (order %s)", p.Side, p.Scheme, p.Blocks, cmp.Or(p.Order, "-"))
}

// lockedClocks returns the clocks a run locked, "" when it locked none (clocks not locked vary
// from sample to sample and are only noted).
func lockedClocks(h results.Hardware) string {
	if !h.ClocksLocked {
		return ""
	}
	return h.Clocks
}

func server(f *results.File) results.Server {
	if f.Server == nil {
		return results.Server{}
	}
	return *f.Server
}

// joinFields sets in out, the merged file of the shards in (sorted by index), what join does
// not: the speculative-decoding record, the GPU time, the pairing, the extra facts, the
// persistence mode, and notes on the runners' differences. The inputs are not modified.
func joinFields(out *results.File, in []Input) error {
	ref := in[0]
	if s := ref.File.SpecDecode; s != nil {
		sd := *s
		sd.AcceptancePass = nil
		where := map[results.CellID]string{}
		for _, x := range in {
			for _, c := range x.File.SpecDecode.AcceptancePass {
				if other, dup := where[c.ID()]; dup {
					return fmt.Errorf("%w: acceptance-pass cell %s is in both %s and %s; each shard measures the acceptance of its own rows", ErrDuplicate, c.ID(), other, x.Name)
				}
				where[c.ID()] = x.Name
				sd.AcceptancePass = append(sd.AcceptancePass, c)
			}
		}
		slices.SortStableFunc(sd.AcceptancePass, func(a, b results.DecodeCell) int {
			return cmp.Or(cmp.Compare(a.Context, b.Context), cmp.Compare(a.Concurrency, b.Concurrency))
		})
		out.SpecDecode = &sd
	}
	out.Run.GPUTime = sumGPUTime(in)
	if p := ref.File.Run.Pairing; p != nil {
		pairing := *p
		var ids []string
		for _, x := range in {
			if id := x.File.Run.Pairing.ID; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		pairing.ID = strings.Join(ids, "+")
		out.Run.Pairing = &pairing
	}
	out.Hardware.Extra, out.Engine.Extra, out.Run.Extra = nil, nil, nil
	for _, x := range in {
		f := x.File
		out.Hardware.Extra = union(out.Hardware.Extra, f.Hardware.Extra)
		out.Engine.Extra = union(out.Engine.Extra, f.Engine.Extra)
		out.Run.Extra = union(out.Run.Extra, f.Run.Extra)
		if f.Hardware.PersistenceMode != ref.File.Hardware.PersistenceMode {
			out.Hardware.PersistenceMode = "mixed"
		}
		for _, d := range []struct{ what, x, y string }{
			{"GPU type", ref.File.Hardware.Type, f.Hardware.Type},
			{"CPU model", ref.File.Hardware.CPUModel, f.Hardware.CPUModel},
			{"OS", ref.File.Hardware.OS, f.Hardware.OS},
			{"clocks", ref.File.Hardware.Clocks, f.Hardware.Clocks},
			{"server metrics", server(ref.File).Metrics, server(f).Metrics},
			{"server block size", strconv.Itoa(server(ref.File).BlockSize), strconv.Itoa(server(f).BlockSize)},
		} {
			if d.x != d.y {
				n := fmt.Sprintf("the shards' runners differ: %s %q in %s but %q in %s (this file keeps the first)", d.what, d.x, ref.Name, d.y, x.Name)
				if !slices.Contains(out.Notes, n) {
					out.Notes = append(out.Notes, n)
				}
			}
		}
	}
	return nil
}

// sumGPUTime adds the shards' GPU time phase by phase: the GPU time of the whole run on all
// its runners, against the sum of their budgets, with every shard's undecided cells. It is nil
// unless every shard has one (a sum that leaves a shard out would be too low).
func sumGPUTime(in []Input) *results.GPUTime {
	var g results.GPUTime
	for _, x := range in {
		s := x.File.Run.GPUTime
		if s == nil {
			return nil
		}
		g.Add(s)
	}
	return &g
}

// union returns a with every entry of b it lacks appended.
func union(a, b []results.KV) []results.KV {
	for _, kv := range b {
		if !slices.Contains(a, kv) {
			a = append(a, kv)
		}
	}
	return a
}
