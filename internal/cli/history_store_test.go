package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/store"
)

// gitChain makes a git repository whose main holds n commits, c0 first, and one commit "gone"
// on c4 that main does not hold (a force push removed it); it returns the folder and the ids.
func gitChain(t *testing.T, n int) (string, []string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string { t.Helper(); return gitIn(t, dir, args...) }
	git("init", "-q", "-b", "main")
	tree := git("hash-object", "-t", "tree", "-w", "--stdin")
	var ids []string
	for i := range n {
		args := []string{"commit-tree", tree, "-m", fmt.Sprint("c", i)}
		if i > 0 {
			args = append(args, "-p", ids[i-1])
		}
		ids = append(ids, git(args...))
	}
	gone := git("commit-tree", tree, "-m", "gone", "-p", ids[4])
	git("update-ref", "refs/heads/main", ids[n-1])
	git("symbolic-ref", "HEAD", "refs/heads/main")
	return dir, ids, gone
}

// historyStore stores n synthetic runs of commits[i] with decode row 8K 6 % slower (2δ) from
// run slowAt on, at the times order gives (a permutation of 0…n−1: the i-th commit is measured
// order[i] hours in), and a slow run of gone measured among them. model names the config.
func historyStore(t *testing.T, dir string, commits []string, order []int, slowAt int, gone, model string) {
	t.Helper()
	s := store.NewDir(dir)
	m := calibrate.NewMatrix(21, 1)
	r := rand.New(rand.NewPCG(21, 2))
	start := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	slow := &calibrate.Slowdown{ContextLabel: "8K", RateFactor: 0.94, TTFTFactor: 1.06}
	put := func(commit string, at int, sl *calibrate.Slowdown) {
		f := m.Run(r, fmt.Sprintf("run-%s-%d", model, at), sl)
		f.Run.ServedModel = model
		f.Engine.Commit = commit
		f.Run.Start = start.Add(time.Duration(at) * time.Hour)
		f.Run.End = f.Run.Start.Add(40 * time.Minute)
		if _, err := s.Put(context.Background(), store.Entry{Commit: commit}, f); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range commits {
		var sl *calibrate.Slowdown
		if i >= slowAt {
			sl = slow
		}
		put(c, order[i], sl)
	}
	if gone != "" {
		put(gone, len(commits)/2, slow)
	}
}

// hours returns n measurement times in hours, from on: commit i measured at from + i.
func hours(n, from int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// seriesCommits returns the commit column of `history --cell` output, in order.
func seriesCommits(out string) []string {
	var got []string
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 && len(f[0]) == 7 && strings.Trim(f[0], "0123456789abcdef") == "" {
			got = append(got, f[0])
		}
	}
	return got
}

// TestHistoryFromStoreAlongCommits: `history --store --git` orders the store's results along
// main's first parents, so a commit measured last (c3, a backfilled baseline) takes its place and
// the change point is at the first slowed commit; a result of a commit main no longer holds is
// left out and said so. Without --git the order is the measurement time, and the user is told.
func TestHistoryFromStoreAlongCommits(t *testing.T) {
	repo, ids, gone := gitChain(t, 20)
	st := filepath.Join(t.TempDir(), "st")
	order := hours(20, 0)
	order[3] = 30 // c3 measured last, after every slowed commit
	historyStore(t, st, ids, order, 10, gone, "model-a")

	out, errOut, code := runCLI("history", "--store", st, "--git", repo, "--cell", "decode/8K/32")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var want []string
	for _, c := range ids {
		want = append(want, c[:7])
	}
	if got := seriesCommits(out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("series order\n got %v\nwant %v (main's order)\n%s", got, want, out)
	}
	if !strings.Contains(out, "regression at "+ids[10][:7]) {
		t.Errorf("no regression at the first slowed commit %s:\n%s", ids[10][:7], out)
	}
	if !strings.Contains(errOut, "left out results of commits") || !strings.Contains(errOut, gone[:7]) {
		t.Errorf("stderr does not name the result of the commit main lost (%s):\n%s", gone[:7], errOut)
	}

	byTime, errOut, code := runCLI("history", "--store", st, "--cell", "decode/8K/32")
	if code != ExitOK {
		t.Fatalf("without --git: exit %d\n%s", code, errOut)
	}
	got := seriesCommits(byTime)
	if len(got) != 21 || got[len(got)-1] != ids[3][:7] {
		t.Errorf("without --git the series is not in measurement order (c3 last, the lost commit kept): %v", got)
	}
	if !strings.Contains(errOut, "give --git DIR") {
		t.Errorf("stderr does not say how to order along commits:\n%s", errOut)
	}
}

// TestHistoryFromStoreConfigs: a store of two configurations needs --config-id for one
// series; --html without --cell writes a page for each and an index that links them.
func TestHistoryFromStoreConfigs(t *testing.T) {
	repo, ids, _ := gitChain(t, 12)
	st := filepath.Join(t.TempDir(), "st")
	historyStore(t, st, ids, hours(12, 0), 6, "", "model-a")
	historyStore(t, st, ids, hours(12, 100), 99, "", "model-b")

	_, errOut, code := runCLI("history", "--store", st, "--git", repo)
	if code != ExitUsage || !strings.Contains(errOut, "2 configurations") || !strings.Contains(errOut, "model-a") || !strings.Contains(errOut, "model-b") {
		t.Errorf("two configs without --config-id: exit %d, want %d naming both\n%s", code, ExitUsage, errOut)
	}
	_, errOut, code = runCLI("history", "--store", st, "--config-id", "0123abcd")
	if code != ExitUsage || !strings.Contains(errOut, "--config-id 0123abcd") {
		t.Errorf("an unknown --config-id: exit %d\n%s", code, errOut)
	}
	a := storedConfig(t, st, "model-a")
	out, errOut, code := runCLI("history", "--store", st, "--git", repo, "--config-id", a)
	if code != ExitOK || !strings.Contains(out, "regression at "+ids[6][:7]) {
		t.Errorf("--config-id %s: exit %d\n%s\n%s", a, code, out, errOut)
	}

	site := filepath.Join(t.TempDir(), "site")
	out, errOut, code = runCLI("history", "--store", st, "--git", repo, "--html", site)
	if code != ExitOK {
		t.Fatalf("--html: exit %d\n%s\n%s", code, out, errOut)
	}
	index, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"model-a", "model-b"} {
		id := storedConfig(t, st, model)
		if !strings.Contains(string(index), `href="`+id+`/index.html"`) || !strings.Contains(string(index), model) {
			t.Errorf("index.html does not link %s (%s):\n%s", id, model, index)
		}
		page, err := os.ReadFile(filepath.Join(site, id, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), "ordered along the first parents of main") {
			t.Errorf("the page of %s does not say how its runs are ordered", model)
		}
		if charts, _ := filepath.Glob(filepath.Join(site, id, "charts", "*.svg")); len(charts) < 40 {
			t.Errorf("%s: %d charts", model, len(charts))
		}
	}
	if !strings.Contains(out, "Config "+a) {
		t.Errorf("stdout does not head each configuration's change points:\n%s", out)
	}
}

// storedConfig returns the config id of model's results in the store at dir.
func storedConfig(t *testing.T, dir, model string) string {
	t.Helper()
	s := store.NewDir(dir)
	es, err := s.List(context.Background(), store.Filter{Kind: store.KindDefault})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		f, err := s.Open(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		if f.Run.ServedModel == model {
			return e.ConfigID
		}
	}
	t.Fatalf("no results of %s in the store", model)
	return ""
}

// TestHistoryPageNamesSkipped: a stored result that cannot be read is left out of the trend,
// and the page, not only the log, says so.
func TestHistoryPageNamesSkipped(t *testing.T) {
	repo, ids, _ := gitChain(t, 8)
	st := filepath.Join(t.TempDir(), "st")
	historyStore(t, st, ids, hours(8, 0), 99, "", "model-a")
	es, err := store.NewDir(st).List(context.Background(), store.Filter{Commit: ids[3]})
	if err != nil || len(es) != 1 {
		t.Fatalf("entries of c3: %v, %v", es, err)
	}
	if err := os.WriteFile(filepath.Join(st, filepath.FromSlash(es[0].Path)), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(t.TempDir(), "site")
	out, errOut, code := runCLI("history", "--store", st, "--git", repo, "--html", site)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	page, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "7 runs") || !strings.Contains(string(page), "skipped a stored result") || !strings.Contains(string(page), es[0].Path) {
		t.Errorf("the page does not say the damaged result %s was left out", es[0].Path)
	}
}
