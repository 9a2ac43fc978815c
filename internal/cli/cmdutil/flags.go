package cmdutil

import (
	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/measure"
)

// IfChanged returns set(name, apply), which runs apply when the flag name was given on the
// command line: how a command's flags override the configuration file's settings, one line a flag.
func IfChanged(fs *pflag.FlagSet) func(name string, apply func()) {
	return func(name string, apply func()) {
		if fs.Changed(name) {
			apply()
		}
	}
}

// MatrixFlags are the flags that shape the matrix a run measures and the plan that splits it
// (the matrix, its lists, the window, the trials, the context warm-up and --max-tokens, which
// trims the longest context): run and plan take them, and mean the same by them.
type MatrixFlags struct {
	o                                     measure.Settings
	contexts, concurrency, prefill, cells string
}

// Add declares the flags on f.
func (m *MatrixFlags) Add(f *pflag.FlagSet) {
	o := &m.o
	*o = measure.DefaultSettings()
	f.StringVar(&o.Matrix, "matrix", o.Matrix, "matrix to measure: full (the reference matrix) or quick (a small smoke matrix)")
	f.StringVar(&m.contexts, "contexts", "", "decode contexts, e.g. 8K,32K,1024K (replaces the matrix's)")
	f.StringVar(&m.concurrency, "concurrency", "", "concurrency levels, e.g. 1,8,32 (replaces the matrix's)")
	f.StringVar(&m.prefill, "prefill-contexts", "", "prefill contexts measured at full length, e.g. 8K,16K,1019K, or none (default: the decode contexts' scouts)")
	f.StringVar(&m.cells, "cells", "", "measure only these cells, e.g. decode/8K/32,prefill/16K (replaces the matrix)")
	f.DurationVar(&o.Duration, "duration", o.Duration, "length of each decode measurement window")
	f.IntVar(&o.MaxTokens, "max-tokens", o.MaxTokens, "max_tokens of every decode request")
	f.IntVar(&o.Trials, "trials", o.Trials, "measure each cell this many times (each trial kept separately)")
	o.ContextWarmup = new(bool)
	f.BoolVar(o.ContextWarmup, "context-warmup", true, "send one hidden request of each context's length (its own prompt) before its scout, so that first-request costs stay out of the prefill measurement")
}

// Apply copies into final every one of the flags given on the command line fs.
func (m *MatrixFlags) Apply(fs *pflag.FlagSet, final *measure.Settings) {
	set, o := IfChanged(fs), &m.o
	set("matrix", func() { final.Matrix = o.Matrix })
	set("contexts", func() { final.Contexts = config.SplitList(m.contexts) })
	set("concurrency", func() { final.Concurrency = config.SplitList(m.concurrency) })
	set("prefill-contexts", func() { final.PrefillContexts = config.SplitList(m.prefill) })
	set("cells", func() { final.Cells = config.SplitList(m.cells) })
	set("duration", func() { final.Duration = o.Duration })
	set("max-tokens", func() { final.MaxTokens = o.MaxTokens })
	set("trials", func() { final.Trials = o.Trials })
	set("context-warmup", func() { v := *o.ContextWarmup; final.ContextWarmup = &v })
}
