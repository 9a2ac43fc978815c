package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// decodeMetricsOf returns the decode metrics a comparison's tables show: the phase's, and
// speculative acceptance length when the comparison compared it.
func decodeMetricsOf(c *results.Comparison) []results.Metric {
	ms := results.Metrics(results.PhaseDecode)
	for _, s := range c.Settings.Metrics {
		if s.Metric == results.MetricSpecAcceptance {
			return append(ms[:len(ms):len(ms)], results.MetricSpecAcceptance)
		}
	}
	return ms
}

// specAcceptance is the comment's line on speculative acceptance, only when acceptance moved:
// every decode cell whose acceptance was found shorter or longer (or possibly shorter), base →
// head with its change, and how the head served
// speculative decoding (pinned, with the acceptance measured in a separate pass). Empty when no
// cell compared it.
func (m *model) specAcceptance() string {
	var parts []string
	oneSided := 0
	for i := range m.c.Cells {
		cell := &m.c.Cells[i]
		mc := cell.Metric(results.MetricSpecAcceptance)
		if mc == nil {
			continue
		}
		if mc.Base == nil || mc.Head == nil || mc.Change == nil {
			oneSided++
			continue
		}
		var mark string
		switch mc.Verdict {
		case results.VerdictRegression:
			mark = MarkRegression
		case results.VerdictImprovement:
			mark = MarkImprovement
		case results.VerdictUnproven:
			mark = MarkNotJudged
		default:
			continue // acceptance did not move: the line is only for a move
		}
		parts = append(parts, fmt.Sprintf("%s %s %s → %s (%s)", mark, cellWords(cell),
			sig3(*mc.Base)+BaseWord(mc), sig3(*mc.Head), pctWords(mc.Change.Change)))
	}
	if len(parts) > 0 && oneSided > 0 {
		parts = append(parts, fmt.Sprintf("%s measured on one side only", textout.Plural(oneSided, "cell", "cells")))
	}
	if len(parts) == 0 {
		return ""
	}
	how := "measured in the matrix's own cells"
	if f := m.x.Head; f != nil && f.Pinned() {
		how = fmt.Sprintf("the head's matrix was served with acceptance pinned at %s tokens/step (spec_decode: pinned), its acceptance measured in a separate unpinned pass", strconv.FormatFloat(f.SpecDecode.PinnedAcceptanceLength, 'f', 2, 64))
	}
	return fmt.Sprintf("**Speculative acceptance** (tokens per draft step, base → head; %s): %s.\n", how, mdEscape(strings.Join(parts, " · ")))
}
