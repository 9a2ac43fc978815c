// Package merge joins the results files of a sharded run — one `speedmatrix run --shard K/N`
// per runner, each measuring whole context rows of one plan (bench.PlanShards) — into the one
// results file a single run of the whole matrix would have written: its cells in a single run's
// order (ascending context, each context's cells as its shard measured them), the settings every
// shard shares (the whole plan's), the run's time from the first start to the last end, the
// budget summed over the shards (the GPU time the whole run used, on all runners together), the
// shards' notes once each plus one saying the cells come from several servers.
//
// It refuses, with the reason and the files involved, to merge what a single run could not have
// measured: a file that is not a shard, shards of different plans, the same shard or cell
// twice, a missing shard (unless Options.AllowPartial, which marks the result partial and
// names the missing shards), different engines (commit, version, build), different hardware
// (GPU model, count, memory, driver, CUDA, power limit, locked clocks), a different
// configuration (store.ConfigID: the model, the matrix, the window, max_tokens, the endpoint,
// the launch command, the time scale; or any other setting but the URL and the simulator's
// seed) or a server with another max_model_len, version or max_num_seqs, a different
// speculative-decoding setup (spec_decode pinned on one shard only, or at another length), another
// speedmatrix version. The acceptance pass, the GPU time (phase by phase) and the extra facts are
// merged; fields.go lists every field and what merging does with it. Each refusal wraps one of
// the Err* sentinels.
//
// Blocks does the same for the blocks of one side of a paired run (`run --paired`): each a
// results file of the whole matrix with one trial per cell, joined into one file whose cells
// hold a trial per block, marked with its block and pair, and summaries recomputed from them.
//
// The package must not read or write files or measure: the caller reads (and so validates) the
// files and writes the result.
//
//	merged, err := merge.Shards([]merge.Input{{Name: "shard-1.json", File: f1}, …}, merge.Options{})
package merge
