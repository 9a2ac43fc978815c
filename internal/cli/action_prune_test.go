package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestActionPushPrunesDataBranch: a push stores its results and then prunes the data branch to
// store.retention.keep default-branch results of the config, newest first (the push's own, the
// current baseline, among them), in a commit of its own that says [skip ci]; another writer
// that moves the branch during the prune loses nothing: the prune retries on the new tip.
func TestActionPushPrunesDataBranch(t *testing.T) {
	e := pushEnv(t, "store: {retention: {keep: 3}}\n")
	e.simTime = false // the racing writer reaches the fake GitHub over the machine's network, from outside a bubble; the verdict is a baseline's, whatever the load
	gh, err := github.NewClient(nil).WithAuthToken(actToken).WithEnterpriseURLs(e.srv.URL, e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	other := store.NewBranch(gh, "Codertocat", "Hello-World")
	f, err := results.ReadFile(baselineResults(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		at := time.Date(2019, 1, 1, i, 0, 0, 0, time.UTC)
		if _, err := other.Put(ctx, store.Entry{Commit: seqSHA(i), Time: at}, f); err != nil {
			t.Fatal(err)
		}
	}
	// The 1st ref update is the push's result, the 2nd the prune's: before that one, another
	// writer stores a pull request's result, so the prune's update is not a fast forward.
	updates, raced := 0, false
	e.srv.OnGit(func(method, path string) {
		if method != "PATCH" || !strings.Contains(path, "/git/refs/heads/speedmatrix-data") || raced {
			return
		}
		if updates++; updates == 2 {
			raced = true
			if _, err := other.Put(ctx, store.Entry{Commit: prHead, Kind: store.KindPR, PR: 2}, f); err != nil {
				t.Errorf("the racing writer: %v", err)
			}
		}
	})
	out, stderr, err := e.run(ctx)
	if err != nil || out["verdict"] != "baseline" {
		t.Fatalf("push: %v, outputs %v\n%s", err, out, stderr)
	}
	if !raced {
		t.Errorf("the push updated the data branch %d times: no prune", updates)
	}
	var kept []string
	pr := false
	for p := range e.srv.Files(actRepo, "heads/speedmatrix-data") {
		switch {
		case strings.HasPrefix(p, "results/"):
			kept = append(kept, strings.Split(p, "/")[1][:7])
		case strings.HasPrefix(p, "pr/2/"+prHead+"/"):
			pr = true
		}
	}
	want := map[string]bool{pushAfter[:7]: true, seqSHA(5)[:7]: true, seqSHA(4)[:7]: true}
	if len(kept) != 3 || !want[kept[0]] || !want[kept[1]] || !want[kept[2]] {
		t.Errorf("default-branch results kept %v, want the push's and seqSHA 4 and 5", kept)
	}
	if !pr {
		t.Errorf("the racing writer's result is lost")
	}
	entries, err := other.List(ctx, store.Filter{})
	if err != nil || len(entries) != 4 {
		t.Errorf("index: %d entries, %v; want 3 default-branch and the PR's", len(entries), err)
	}
	tip, _ := e.srv.Commit(actRepo, e.srv.Ref(actRepo, "heads/speedmatrix-data"))
	if !strings.Contains(tip.Message, "prune 3 results") || !strings.Contains(tip.Message, "[skip ci]") {
		t.Errorf("the data branch's tip %q, want the prune's commit", tip.Message)
	}
}

// TestActionSplitReportPrunes: in the split workflow the report job, which stores the push's
// results, prunes the data branch by store.retention too.
func TestActionSplitReportPrunes(t *testing.T) {
	e := pushEnv(t, "store: {retention: {keep: 1}}\n")
	gh, err := github.NewClient(nil).WithAuthToken(actToken).WithEnterpriseURLs(e.srv.URL, e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.ReadFile(baselineResults(t))
	if err != nil {
		t.Fatal(err)
	}
	other := store.NewBranch(gh, "Codertocat", "Hello-World")
	for i := 1; i <= 2; i++ {
		if _, err := other.Put(context.Background(), store.Entry{Commit: seqSHA(i), Time: time.Date(2019, 1, 1, i, 0, 0, 0, time.UTC)}, f); err != nil {
			t.Fatal(err)
		}
	}
	splitRun(t, e)
	for i := 1; i <= 2; i++ {
		if def, _ := dataFiles(e, seqSHA(i)); def != 0 {
			t.Errorf("seqSHA(%d)'s result kept beyond keep 1", i)
		}
	}
	if def, _ := dataFiles(e, pushAfter); def != 1 {
		t.Errorf("the push's result (the current baseline) is not on the data branch")
	}
}

// TestActionPushPrunesAlongCommits: the bot's retention counts results along the pushed
// commit's first parents, not by when they were measured. A baseline of an old commit measured
// after the push (speedmatrix baseline --commit OLD, while the push's job ran) and the result of
// a commit force-pushed away do not push the pushed commit's result and its parent's out; where
// the commit graph cannot be read, retention goes by time with a warning, and the pushed
// commit's result stays all the same.
func TestActionPushPrunesAlongCommits(t *testing.T) {
	for _, readable := range []bool{true, false} {
		t.Run(fmt.Sprint("graph readable ", readable), func(t *testing.T) {
			e := newStoreEnv(t, 0)
			e.writeConfig(actionConfig("") + "store: {dir: " + filepath.Join(e.dir, "store") + ", min_history: 3, retention: {keep: 2}}\n")
			day := time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC)
			parent := prBase
			for i := 1; i <= 4; i++ {
				parent = e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: seqSHA(i), Message: fmt.Sprint("c", i), Parents: []string{parent}, Date: day.Add(time.Duration(i) * time.Hour)}, nil)
			}
			gone := e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: seqSHA(0x300), Message: "gone", Parents: []string{seqSHA(2)}, Date: day.Add(20 * time.Hour)}, nil)
			if readable {
				e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: pushAfter, Message: "pushed", Parents: []string{seqSHA(4)}, Date: day.Add(30 * time.Hour)}, nil)
			}
			later := time.Now().Add(24 * time.Hour) // measured after the push's run ends
			e.putScaledAt(seqSHA(3), 1, day)
			e.putScaledAt(seqSHA(4), 1, day.Add(time.Hour))
			e.putScaledAt(gone, 1, later)
			e.putScaledAt(seqSHA(1), 1, later.Add(time.Hour)) // the backfill, measured last
			var listings atomic.Int32                         // commit listings read: the change points and pruning share one walk
			e.srv.OnGit(func(method, path string) {
				if method == "GET" && strings.HasSuffix(path, "/commits") {
					listings.Add(1)
				}
			})
			stderr := e.pushOf(pushAfter)
			if readable && listings.Load() != 1 {
				t.Errorf("the push read the commit listing %d times; want once (the pushed commit's first parents, walked for the change points and for pruning)", listings.Load())
			}
			kept := map[string]bool{}
			es, err := e.st.List(context.Background(), store.Filter{Kind: store.KindDefault})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range es {
				kept[x.Commit] = true
			}
			if !kept[pushAfter] {
				t.Errorf("the pushed commit's result was pruned\n%s", stderr)
			}
			if !readable {
				if !strings.Contains(stderr, "could not be read; the newest results are the last measured") {
					t.Errorf("no warning that retention fell back on time:\n%s", stderr)
				}
				return
			}
			if len(kept) != 2 || !kept[seqSHA(4)] {
				t.Errorf("kept %d results, want the pushed commit's and its parent's (%s): %v\n%s", len(kept), seqSHA(4)[:7], kept, stderr)
			}
			if !strings.Contains(stderr, "first parents of the pushed commit") {
				t.Errorf("the log does not say how recency was decided:\n%s", stderr)
			}
		})
	}
}
