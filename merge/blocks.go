package merge

import (
	"errors"
	"fmt"
	"slices"

	"github.com/speedmatrix/speedmatrix/results"
)

// Blocks joins the blocks of one side of a paired run, each a results file of the matrix
// with one trial per cell, into one file: the first block's header (run, engine, hardware,
// server), every cell's trials in block order, each marked with its block (blockNo, the block's
// place in the order served) and pair (its place among this side's blocks), and the summaries
// recomputed from them. A cell that was not measured in some block (an error, over capacity)
// takes that block's status and error, which names the block. The run's start is the first
// block's, its end the last's; Budget adds up; Notes are joined.
func Blocks(blocks []*results.File, blockNo []int) (*results.File, error) {
	if len(blocks) == 0 || len(blocks) != len(blockNo) {
		return nil, errors.New("merge blocks: want one block number per block, and at least one block")
	}
	out := *blocks[0]
	out.Prefill, out.Decode, out.Notes = nil, nil, nil
	if s := blocks[0].Run.Settings; s != nil {
		c := *s
		out.Run.Settings = &c
	} else {
		out.Run.Settings = &results.Settings{}
	}
	out.Run.Settings.Trials = len(blocks)
	out.Run.Budget = nil
	prefill := map[results.CellID]int{}
	decode := map[results.CellID]int{}
	failed := map[results.CellID]bool{}
	for i, f := range blocks {
		pair, block := i+1, blockNo[i]
		for _, n := range f.Notes {
			if !slices.Contains(out.Notes, n) {
				out.Notes = append(out.Notes, n)
			}
		}
		if i > 0 {
			out.Run.End = f.Run.End
			out.Run.Partial = out.Run.Partial || f.Run.Partial
			if f.Run.PartialReason != "" {
				out.Run.PartialReason = fmt.Sprintf("block %d: %s", block, f.Run.PartialReason)
			}
		}
		out.Run.Budget = results.SumBudgets(out.Run.Budget, f.Run.Budget)
		for _, c := range f.Prefill {
			m := mergeSlot(&out.Prefill, prefill, failed, c.ID(), c, c.Status.Measured(),
				results.PrefillCell{Context: c.Context, ContextLabel: c.ContextLabel, Status: results.StatusValid},
				func(m *results.PrefillCell) { m.Trials, m.Error = nil, blockError(block, m.Error) })
			if m == nil {
				continue
			}
			for _, t := range c.Trials {
				t.Block, t.Pair = block, pair
				m.Trials = append(m.Trials, t)
			}
		}
		for _, c := range f.Decode {
			m := mergeSlot(&out.Decode, decode, failed, c.ID(), c, c.Status.Measured(),
				results.DecodeCell{Context: c.Context, ContextLabel: c.ContextLabel, Concurrency: c.Concurrency, Status: results.StatusValid},
				func(m *results.DecodeCell) { m.Trials, m.Error = nil, blockError(block, m.Error) })
			if m == nil {
				continue
			}
			if c.Status == results.StatusQueued {
				m.Status = results.StatusQueued
			}
			for _, t := range c.Trials {
				t.Block, t.Pair = block, pair
				m.Trials = append(m.Trials, t)
			}
		}
	}
	for i := range out.Prefill {
		if c := &out.Prefill[i]; !failed[c.ID()] {
			c.Summarize()
		}
	}
	for i := range out.Decode {
		c := &out.Decode[i]
		if failed[c.ID()] || len(c.Trials) == 0 {
			continue
		}
		c.DecodeMetrics = results.SummarizeDecode(c.Trials)
	}
	return &out, nil
}

// mergeSlot returns the merged cell (in cells, found by id through index) that a block's cell c
// adds its trials to, appending fresh the first time id is seen. It returns nil when c adds
// none: when the merged cell failed in an earlier block, or when c was not measured; the merged
// cell then becomes c, passed through fail (which drops its trials and names the block in its
// error), and stays failed.
func mergeSlot[C any](cells *[]C, index map[results.CellID]int, failed map[results.CellID]bool, id results.CellID, c C, measured bool, fresh C, fail func(*C)) *C {
	j, seen := index[id]
	if !seen {
		j = len(*cells)
		index[id] = j
		*cells = append(*cells, fresh)
	}
	if failed[id] {
		return nil
	}
	m := &(*cells)[j]
	if !measured {
		*m = c
		fail(m)
		failed[id] = true
		return nil
	}
	return m
}

// blockError is a cell's error in a merged file: "block N: error", or "" without one.
func blockError(block int, msg string) string {
	if msg == "" {
		return ""
	}
	return fmt.Sprintf("block %d: %s", block, msg)
}
