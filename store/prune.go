package store

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/textout"
)

// Policy is what pruning keeps.
type Policy struct {
	// Keep is how many default-branch results to keep per config id, the newest first (see
	// Lineage for what newest means); 0 keeps all. The newest one of each config id is kept
	// whatever Keep says: it is the current baseline.
	Keep int
	// KeepAA is how many A/A reruns to keep per config id, newest first; 0 keeps all.
	KeepAA int
	// PRAge is how long PR results are kept after they were measured; 0 keeps them all.
	PRAge time.Duration
	// Now is the time PRAge counts back from (default: the store's clock).
	Now time.Time
	// Protect lists default-branch commits whose results must stay whatever their age: the
	// baselines that open pull requests' comparisons cite (Resolve gives them), the commit a
	// push just measured.
	Protect []string
	// Lineage is the default branch's first-parent commits, newest first (Commits.Ancestors of
	// its tip, at most LineageDepth of them). When given, a default-branch result is as new as
	// its commit's place on it, not as the time it was measured: a baseline measured last of a
	// commit long merged (speedmatrix baseline --commit OLD) is old, and the tip's result the
	// newest. Results of commits not on it (force-pushed away, on a merged branch only, or
	// beyond the commits walked) rank after all that are, newest measured first. Without it,
	// the newest is the last measured.
	Lineage []string
	// DryRun computes what would be removed without removing it.
	DryRun bool
}

// LineageDepth is how many first-parent commits to walk back for a Policy.Lineage that keeps
// keep results of a config: four times as many (pushes that were not measured), and at least
// DefaultMaxDepth, as far as baseline resolution looks back.
func LineageDepth(keep int) int { return max(4*keep, DefaultMaxDepth) }

// Recency says in one line how p decides which default-branch results are the newest; along
// names the commit Lineage was walked from (e.g. "HEAD in ../vllm").
func (p Policy) Recency(along string) string {
	if len(p.Lineage) == 0 {
		return "recency of default-branch results: the time each was measured (no commit graph given)"
	}
	return fmt.Sprintf("recency of default-branch results: their commit's place on the first parents of %s (%s walked); results of commits not on them rank after, by the time they were measured", along, textout.Plural(len(p.Lineage), "commit", "commits"))
}

// OffLineage returns the default-branch entries whose commit is not on p.Lineage, in the order
// given; none without a Lineage.
func (p Policy) OffLineage(entries []Entry) []Entry {
	if len(p.Lineage) == 0 {
		return nil
	}
	pos := p.positions()
	var out []Entry
	for _, e := range entries {
		if _, on := pos[e.Commit]; e.Kind == KindDefault && !on {
			out = append(out, e)
		}
	}
	return out
}

// positions maps each commit of p.Lineage to its place, 0 the tip.
func (p Policy) positions() map[string]int {
	pos := make(map[string]int, len(p.Lineage))
	for i, c := range p.Lineage {
		c = strings.ToLower(c)
		if _, ok := pos[c]; !ok {
			pos[c] = i
		}
	}
	return pos
}

// Plan splits the index entries into those p keeps and those it removes. Default-branch
// results rank newest first, along p.Lineage when given (by commit, not by the time they were
// measured), else by time; Plan keeps the best-ranked p.Keep of each config id, and never
// removes the best-ranked one (the current baseline of every PR whose merge-base is at or after
// it), a result of a protected commit, nor the baseline a kept PR result cites (Entry.Base): a
// pull request measured within PRAge keeps the result it was compared with, however many
// pushes came after it. A/A reruns rank by time. Both lists are oldest measured first.
func Plan(entries []Entry, p Policy) (keep, remove []Entry) {
	protect := map[string]bool{}
	for _, c := range p.Protect {
		protect[strings.ToLower(c)] = true
	}
	for _, e := range entries {
		if e.Kind == KindPR && e.Base != "" && !p.prExpired(e) {
			protect[e.Base] = true
		}
	}
	ix := &Index{Entries: append([]Entry(nil), entries...)}
	ix.sort()
	// Newest first: by time, then the default-branch results by lineage (the kinds are
	// counted apart, so each is ordered on its own).
	var defaults, others []int
	for i := len(ix.Entries) - 1; i >= 0; i-- {
		if ix.Entries[i].Kind == KindDefault {
			defaults = append(defaults, i)
		} else {
			others = append(others, i)
		}
	}
	pos := p.positions()
	slices.SortStableFunc(defaults, func(a, b int) int {
		ia, oka := pos[ix.Entries[a].Commit]
		ib, okb := pos[ix.Entries[b].Commit]
		switch {
		case oka && okb:
			return ia - ib
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0 // both off the lineage: by time, as they are
	})
	order := append(defaults, others...)
	drop := make([]bool, len(ix.Entries))
	seen := map[Kind]map[string]int{KindDefault: {}, KindAA: {}, KindBisect: {}}
	for _, i := range order {
		e := ix.Entries[i]
		switch e.Kind {
		case KindDefault:
			seen[KindDefault][e.ConfigID]++
			n := seen[KindDefault][e.ConfigID]
			drop[i] = p.Keep > 0 && n > max(p.Keep, 1) && !protect[e.Commit]
		case KindAA:
			seen[KindAA][e.ConfigID]++
			drop[i] = p.KeepAA > 0 && seen[KindAA][e.ConfigID] > p.KeepAA
		case KindBisect: // kept as many as A/A reruns: measurements of default-branch commits
			seen[KindBisect][e.ConfigID]++
			drop[i] = p.KeepAA > 0 && seen[KindBisect][e.ConfigID] > p.KeepAA
		case KindPR:
			drop[i] = p.prExpired(e)
		}
	}
	for i, e := range ix.Entries {
		if drop[i] {
			remove = append(remove, e)
		} else {
			keep = append(keep, e)
		}
	}
	return keep, remove
}

// prExpired reports whether a PR result is older than PRAge.
func (p Policy) prExpired(e Entry) bool {
	return p.PRAge > 0 && !p.Now.IsZero() && p.Now.Sub(e.Time) > p.PRAge
}
