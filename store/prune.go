package store

import (
	"time"
)

// Policy is what pruning keeps.
type Policy struct {
	// Keep is how many default-branch results to keep per config id, newest first; 0 keeps
	// all. The newest one of each config id is kept whatever Keep says: it is the current
	// baseline.
	Keep int
	// KeepAA is how many A/A reruns to keep per config id, newest first; 0 keeps all.
	KeepAA int
	// PRAge is how long PR results are kept after they were measured; 0 keeps them all.
	PRAge time.Duration
	// Now is the time PRAge counts back from (default: the store's clock).
	Now time.Time
	// Protect lists default-branch commits whose results must stay whatever their age: the
	// baselines that open pull requests' comparisons cite (Resolve gives them).
	Protect []string
	// DryRun computes what would be removed without removing it.
	DryRun bool
}

// Plan splits the index entries into those p keeps and those it removes. It never removes the
// newest default-branch result of a config id (the current baseline of every PR whose
// merge-base is at or after it), a result of a protected commit, nor the baseline a kept PR
// result cites (Entry.Base): a pull request measured within PRAge keeps the result it was
// compared with, however many pushes came after it.
func Plan(entries []Entry, p Policy) (keep, remove []Entry) {
	protect := map[string]bool{}
	for _, c := range p.Protect {
		protect[c] = true
	}
	for _, e := range entries {
		if e.Kind == KindPR && e.Base != "" && !p.prExpired(e) {
			protect[e.Base] = true
		}
	}
	ix := &Index{Entries: append([]Entry(nil), entries...)}
	ix.sort()
	// Newest first, counting per kind and config id.
	seen := map[Kind]map[string]int{KindDefault: {}, KindAA: {}}
	var keepRev, removeRev []Entry
	for i := len(ix.Entries) - 1; i >= 0; i-- {
		e := ix.Entries[i]
		drop := false
		switch e.Kind {
		case KindDefault:
			seen[KindDefault][e.ConfigID]++
			n := seen[KindDefault][e.ConfigID]
			drop = p.Keep > 0 && n > max(p.Keep, 1) && !protect[e.Commit]
		case KindAA:
			seen[KindAA][e.ConfigID]++
			drop = p.KeepAA > 0 && seen[KindAA][e.ConfigID] > p.KeepAA
		case KindPR:
			drop = p.prExpired(e)
		}
		if drop {
			removeRev = append(removeRev, e)
		} else {
			keepRev = append(keepRev, e)
		}
	}
	for i := len(keepRev) - 1; i >= 0; i-- {
		keep = append(keep, keepRev[i])
	}
	for i := len(removeRev) - 1; i >= 0; i-- {
		remove = append(remove, removeRev[i])
	}
	return keep, remove
}

// prExpired reports whether a PR result is older than PRAge.
func (p Policy) prExpired(e Entry) bool {
	return p.PRAge > 0 && !p.Now.IsZero() && p.Now.Sub(e.Time) > p.PRAge
}
