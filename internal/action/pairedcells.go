package action

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/results"
)

// The estimates a budgeted paired run reserves for what the plan does not price (docs/paired.md,
// "Which cells a budget affords"): each side's build, by engine.build, and each start of a
// server (one per block and side; one per side with paired.keep_serving). They depend on the
// configuration only, so that the measure job, which chooses the cells, and the report job,
// which says which they are, compute the same choice.
const (
	pairedBuildEstimate     = 5 * time.Minute  // precompiled, auto, command: the wheel or the cache
	pairedFullBuildEstimate = 30 * time.Minute // full (CUDA kernels, from ccache)
	pairedDockerEstimate    = 15 * time.Minute // docker
	pairedLoadEstimate      = 3 * time.Minute  // a model load until the server answers
)

// PairedChoice is what a paired run within a budget measures: the cells of the configured matrix
// it affords, in the order of PairedCellOrder, and the blocks a side, with what it expects to
// cost.
type PairedChoice struct {
	// Cells are the chosen cells, in the order they were added; Of the matrix's cells.
	Cells []string
	Of    int
	// Blocks is the blocks a side.
	Blocks int
	// Block is the expected time of one block of one side (the plan's: windows, readiness,
	// prefills, scouts); Overhead the builds and loads (pairedOverhead); Estimate the whole run,
	// Overhead + 2 × Blocks × Block; Budget the job's.
	Block, Overhead, Estimate, Budget time.Duration
	// Rows and Columns are the matrix's decode contexts and concurrencies; RowsLeft and
	// ColumnsLeft those of which no cell was chosen (a slowdown there is not looked for).
	Rows, Columns, RowsLeft, ColumnsLeft []string
	// Whole is set when every cell fits: the choice is the matrix itself.
	Whole bool
}

// PairedCellOrder returns the cells of a plan (each a cell id, contexts ascending as the plan
// measures them) in the order a paired run within a budget adds them: rounds of a Latin square
// over the decode rows (contexts, ascending) and columns (concurrencies, ascending). Round 0 is
// the anti-diagonal — the smallest context with the most requests at once down to the largest
// context with one, cells of about equal KV-cache load, so that none of them is the first over
// capacity — and each later round shifts it by one column, so that every round holds one cell of
// each row and of each column: a slowdown of a whole phase, row or column shows in the first
// round already, and each round after adds a cell to every row and column. A row's prefill cell
// comes with its first decode cell (the row's scout measures it; it costs no window of its own);
// a prefill cell of a context without decode cells comes in round 0, in context order. Cells
// that are not valid ids are left out.
func PairedCellOrder(cells []string) [][]string {
	var rows []string
	prefill := map[string]string{}
	byRow := map[string][]results.CellID{}
	colSet := map[int]bool{}
	for _, s := range cells {
		id, err := results.ParseCellID(s)
		if err != nil {
			continue
		}
		if !slices.Contains(rows, id.ContextLabel) {
			rows = append(rows, id.ContextLabel)
		}
		if id.Phase == results.PhasePrefill {
			prefill[id.ContextLabel] = id.String()
			continue
		}
		byRow[id.ContextLabel] = append(byRow[id.ContextLabel], id)
		colSet[id.Concurrency] = true
	}
	cols := make([]int, 0, len(colSet))
	for c := range colSet {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	var units [][]string
	started := map[string]bool{}
	// Round 0 first holds the rows without decode cells (prefill only), in context order.
	for _, r := range rows {
		if len(byRow[r]) == 0 && prefill[r] != "" {
			units = append(units, []string{prefill[r]})
		}
	}
	var decodeRows []string
	for _, r := range rows {
		if len(byRow[r]) > 0 {
			decodeRows = append(decodeRows, r)
		}
	}
	nc := len(cols)
	for round := range nc {
		for i, r := range decodeRows {
			want := cols[((nc-1-i%nc)+round)%nc]
			k := slices.IndexFunc(byRow[r], func(id results.CellID) bool { return id.Concurrency == want })
			if k < 0 {
				continue // the row does not measure that column (a cells list)
			}
			var u []string
			if !started[r] && prefill[r] != "" {
				u = append(u, prefill[r])
			}
			started[r] = true
			units = append(units, append(u, byRow[r][k].String()))
		}
	}
	// A row whose cells fell on no round's column (never, for a full row) still gets its prefill.
	for _, r := range decodeRows {
		if !started[r] && prefill[r] != "" {
			units = append(units, []string{prefill[r]})
		}
	}
	return units
}

// pairedOverhead is what a paired run of cfg with blocks a side is expected to spend besides
// its cells: two builds (one a side, by engine.build) and a model load per start (each block of
// each side; one a side with paired.keep_serving). Nothing where the run starts no server (the
// built-in simulators, or url and paired.base_url).
func pairedOverhead(cfg config.Config, blocks int) time.Duration {
	if cfg.Engine.Serve == nil || cfg.URL != "" {
		return 0
	}
	var build time.Duration
	switch cfg.Engine.BuildMode() {
	case config.BuildNone:
	case config.BuildFull:
		build = pairedFullBuildEstimate
	case config.BuildDocker:
		build = pairedDockerEstimate
	default:
		build = pairedBuildEstimate
	}
	starts := 2 * blocks
	if cfg.Paired.KeepServing {
		starts = 2
	}
	return 2*build + time.Duration(starts)*pairedLoadEstimate
}

// BuildLoadEstimate is what one measurement of cfg is expected to spend besides its cells: a
// build and a model load (pairedOverhead's estimates, one side, one start).
func BuildLoadEstimate(cfg config.Config) time.Duration {
	c := cfg
	c.Paired.KeepServing = true
	return pairedOverhead(c, 1) / 2
}

// ChoosePairedCells returns what a paired run of cfg affords within cfg.Budget: the configured
// matrix's cells (price lists them and returns the expected time of one block of one side of a
// cell list: the plan's) added unit by unit in PairedCellOrder's order, each kept when the whole
// run, pairedOverhead + 2 × blocks × the block, still fits the budget, and skipped when it does
// not (a later, cheaper one may). Blocks are paired.blocks; when not even the first unit fits,
// fewer, down to 2 a side (the pairs the noise is estimated from). An error says what the
// cheapest paired run would cost when none fits, or that the cells cannot be priced.
func ChoosePairedCells(cfg config.Config, price func(cfg config.Config) (cells []string, block time.Duration, err error)) (PairedChoice, error) {
	all, whole, err := price(cfg)
	if err != nil {
		return PairedChoice{}, fmt.Errorf("price the matrix: %w", err)
	}
	if len(all) == 0 || whole <= 0 {
		return PairedChoice{}, errors.New("price the matrix: the plan has no cells or no expected time")
	}
	ch := PairedChoice{Of: len(all), Budget: cfg.Budget}
	ch.Rows, ch.Columns = rowsAndColumns(all)
	units := PairedCellOrder(all)
	blockOf := func(cells []string) (time.Duration, error) {
		c := cfg
		c.Cells = config.List(cells)
		_, d, err := price(c)
		return d, err
	}
	for blocks := max(cfg.Paired.Blocks, 2); blocks >= 2; blocks-- {
		over := pairedOverhead(cfg, blocks)
		fits := func(block time.Duration) bool { return over+2*time.Duration(blocks)*block <= cfg.Budget }
		if fits(whole) {
			ch.Cells, ch.Blocks, ch.Block, ch.Overhead, ch.Whole = all, blocks, whole, over, true
			break
		}
		var chosen []string
		var block time.Duration
		for _, u := range units {
			try := append(slices.Clone(chosen), u...)
			d, err := blockOf(try)
			if err != nil {
				return PairedChoice{}, fmt.Errorf("price the cells %s: %w", strings.Join(try, ","), err)
			}
			if fits(d) {
				chosen, block = try, d
			}
		}
		if len(chosen) > 0 {
			ch.Cells, ch.Blocks, ch.Block, ch.Overhead = chosen, blocks, block, over
			break
		}
		if blocks == 2 {
			first, err := blockOf(units[0])
			if err != nil {
				return PairedChoice{}, err
			}
			return PairedChoice{}, fmt.Errorf("a paired run needs at least 2 blocks a side, about %v of GPU time for its first cells %s (%v of builds and model loads, 4 × %v for the cells), more than the budget %v: raise budget, or name fewer cells (/bench paired CELLS)",
				(over + 4*first).Round(time.Minute), strings.Join(units[0], ","), over.Round(time.Minute), first.Round(time.Second), cfg.Budget)
		}
	}
	ch.Estimate = ch.Overhead + 2*time.Duration(ch.Blocks)*ch.Block
	r, c := rowsAndColumns(ch.Cells)
	for _, x := range ch.Rows {
		if !slices.Contains(r, x) {
			ch.RowsLeft = append(ch.RowsLeft, x)
		}
	}
	for _, x := range ch.Columns {
		if !slices.Contains(c, x) {
			ch.ColumnsLeft = append(ch.ColumnsLeft, x)
		}
	}
	return ch, nil
}

// rowsAndColumns returns the decode contexts (in the cells' order) and concurrencies
// (ascending) of a cell list.
func rowsAndColumns(cells []string) (rows, cols []string) {
	var cs []int
	for _, s := range cells {
		id, err := results.ParseCellID(s)
		if err != nil || id.Phase != results.PhaseDecode {
			continue
		}
		if !slices.Contains(rows, id.ContextLabel) {
			rows = append(rows, id.ContextLabel)
		}
		if !slices.Contains(cs, id.Concurrency) {
			cs = append(cs, id.Concurrency)
		}
	}
	slices.SortFunc(cs, cmp.Compare)
	for _, c := range cs {
		cols = append(cols, fmt.Sprint(c))
	}
	return rows, cols
}

// Line says the choice in one sentence, for the check, the comment and validate.
func (ch PairedChoice) Line() string {
	min := func(d time.Duration) string { return fmt.Sprintf("%.0f min", d.Minutes()) }
	if ch.Whole {
		return fmt.Sprintf("the whole matrix (%d cells) fits the budget %s: ≈ %s (%s of builds and model loads, 2 sides × %d blocks × %.1f min)",
			ch.Of, min(ch.Budget), min(ch.Estimate), min(ch.Overhead), ch.Blocks, ch.Block.Minutes())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of the matrix's %d cells fit the budget %s: ≈ %s (%s of builds and model loads, 2 sides × %d blocks × %.1f min), chosen by rounds of a Latin square over contexts and concurrencies, the anti-diagonal first (docs/paired.md)",
		len(ch.Cells), ch.Of, min(ch.Budget), min(ch.Estimate), min(ch.Overhead), ch.Blocks, ch.Block.Minutes())
	switch {
	case len(ch.RowsLeft) == 0 && len(ch.ColumnsLeft) == 0:
		b.WriteString("; every context and every concurrency has a cell")
	default:
		var left []string
		if len(ch.RowsLeft) > 0 {
			left = append(left, "contexts "+strings.Join(ch.RowsLeft, ", "))
		}
		if len(ch.ColumnsLeft) > 0 {
			left = append(left, "concurrencies "+strings.Join(ch.ColumnsLeft, ", "))
		}
		b.WriteString("; no cell of " + strings.Join(left, " or ") + " (not looked at: raise budget)")
	}
	return b.String()
}
