package store_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

const dataRef = "heads/" + store.DefaultBranch

// firstParents returns the data branch's commits, tip first, following first parents.
func firstParents(t *testing.T, s *ghtest.Server) []ghtest.GitCommit {
	var out []ghtest.GitCommit
	for sha := s.Ref("o/r", dataRef); sha != ""; {
		c, ok := s.Commit("o/r", sha)
		if !ok {
			t.Fatalf("commit %s of the data branch is missing", sha)
		}
		out = append(out, c)
		sha = ""
		if len(c.Parents) > 0 {
			sha = c.Parents[0]
		}
	}
	return out
}

// TestBranchCreatedAsOrphan checks the first Put on a repository without the data branch: the
// branch is created, its first commit has no parent (it shares no history with the code), and
// its message keeps workflows from running.
func TestBranchCreatedAsOrphan(t *testing.T) {
	s, gh := fakeGitHub(t)
	code := s.AddCommit("o/r", ghtest.GitCommit{Message: "code"}, map[string][]byte{"main.go": []byte("package main")})
	s.SetRef("o/r", "heads/main", code)
	b := store.NewBranch(gh, "o", "r", store.WithBranchClock(time.Now, noSleep))
	if got := s.Ref("o/r", dataRef); got != "" {
		t.Fatalf("the data branch exists before the first Put: %s", got)
	}
	if es, err := b.List(ctx(t), store.Filter{}); err != nil || len(es) != 0 {
		t.Fatalf("List of a missing branch: %v, %v; want an empty store", es, err)
	}
	f := runFile(t)
	if _, err := b.Put(ctx(t), at(sha("c1"), 1), f); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx(t), at(sha("c2"), 2), f); err != nil {
		t.Fatal(err)
	}
	commits := firstParents(t, s)
	if len(commits) != 2 {
		t.Fatalf("the data branch holds %d commits, want 2", len(commits))
	}
	if root := commits[1]; len(root.Parents) != 0 {
		t.Errorf("the data branch's first commit has parents %v, want none (an orphan)", root.Parents)
	}
	for _, c := range commits {
		if !strings.Contains(c.Message, "[skip ci]") {
			t.Errorf("commit message %q lacks [skip ci]", c.Message)
		}
	}
	files := s.Files("o/r", dataRef)
	if _, ok := files["main.go"]; ok {
		t.Error("the data branch holds the code's files")
	}
	if s.Ref("o/r", "heads/main") != code {
		t.Error("the code's branch moved")
	}
	st := s.State()
	if n := len(st.CallsTo("POST", "/repos/o/r/git/refs")); n != 1 {
		t.Errorf("%d ref creations, want 1", n)
	}
	for _, c := range st.CallsTo("PATCH", "/repos/o/r/git/refs/") {
		if strings.Contains(c.Body, `"force":true`) {
			t.Errorf("a ref update forced: %s", c.Body)
		}
	}
}

// racePair runs two Puts at once against the fake, which holds each writer's first ref write
// (create or update) until both have built their commit on the same tip: one of them must lose
// the race. It returns the errors.
func racePair(t *testing.T, s *ghtest.Server, b *store.Branch, f *results.File, commits [2]string) [2]error {
	var mu sync.Mutex
	held := 0
	both := make(chan struct{})
	s.OnGit(func(method, path string) {
		if !strings.Contains(path, "/git/refs") || method == "GET" {
			return
		}
		mu.Lock()
		held++
		n := held
		mu.Unlock()
		switch {
		case n == 2:
			close(both)
		case n > 2:
			return
		}
		select {
		case <-both:
		case <-time.After(10 * time.Second):
			t.Error("the second writer never reached its ref update")
		}
	})
	defer s.OnGit(nil)
	var errs [2]error
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.Put(ctx(t), at(commits[i], i+1), f)
		}()
	}
	wg.Wait()
	return errs
}

// TestBranchRacingWriters runs two writers at once, on an existing data branch and on a missing
// one: both results end up stored, in a linear history, with no forced update.
func TestBranchRacingWriters(t *testing.T) {
	for _, exists := range []bool{true, false} {
		t.Run(fmt.Sprintf("branch exists %v", exists), func(t *testing.T) {
			s, gh := fakeGitHub(t)
			b := store.NewBranch(gh, "o", "r", store.WithBranchClock(time.Now, noSleep))
			f := runFile(t)
			before := 0
			if exists {
				if _, err := b.Put(ctx(t), at(sha("c0"), 0), f); err != nil {
					t.Fatal(err)
				}
				before = 1
			}
			errs := racePair(t, s, b, f, [2]string{sha("c1"), sha("c2")})
			for _, err := range errs {
				if err != nil {
					t.Fatalf("a racing Put failed: %v", err)
				}
			}
			es, err := b.List(ctx(t), store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != before+2 {
				t.Errorf("index holds %d entries, want %d: %+v", len(es), before+2, es)
			}
			files := s.Files("o/r", dataRef)
			for _, c := range []string{sha("c1"), sha("c2")} {
				if _, _, err := b.Get(ctx(t), c, store.ConfigID(f)); err != nil {
					t.Errorf("Get %s after the race: %v", c[:7], err)
				}
				if _, ok := files["results/"+c+"/"+store.ConfigID(f)+".json"]; !ok {
					t.Errorf("the branch lacks the results of %s", c[:7])
				}
			}
			if n := len(firstParents(t, s)); n != before+2 {
				t.Errorf("the branch holds %d commits, want %d (one per Put, linear)", n, before+2)
			}
			st := s.State()
			var refused int
			for _, c := range st.Calls {
				if strings.Contains(c.Path, "/git/refs") && c.Method != "GET" && c.Status == http.StatusUnprocessableEntity {
					refused++
				}
			}
			if refused != 1 {
				t.Errorf("%d ref writes refused with 422, want 1 (the race was not forced)", refused)
			}
		})
	}
}

// TestBranchGivesUpAfterAttempts checks that a writer that keeps losing the race stops, with an
// error that says so.
func TestBranchGivesUpAfterAttempts(t *testing.T) {
	s, gh := fakeGitHub(t)
	b := store.NewBranch(gh, "o", "r", store.WithBranchClock(time.Now, noSleep), store.WithBranchRetry(3, time.Millisecond, time.Millisecond))
	f := runFile(t)
	if _, err := b.Put(ctx(t), at(sha("c0"), 0), f); err != nil {
		t.Fatal(err)
	}
	s.Fail(ghtest.Fault{Method: "PATCH", Path: "/repos/o/r/git/refs/", Status: 422, Body: `{"message":"Update is not a fast forward"}`, Times: 3})
	_, err := b.Put(ctx(t), at(sha("c1"), 1), f)
	if err == nil || !strings.Contains(err.Error(), "3 attempts") {
		t.Errorf("Put against a branch that always moves: %v, want an error after 3 attempts", err)
	}
}

// TestBranchPrune checks that pruning deletes the files from the branch's tip in one commit,
// rewrites the index and keeps the newest default-branch result.
func TestBranchPrune(t *testing.T) {
	s, gh := fakeGitHub(t)
	now := t0.Add(100 * 24 * time.Hour)
	b := store.NewBranch(gh, "o", "r", store.WithBranchClock(func() time.Time { return now }, noSleep))
	f := runFile(t)
	id := store.ConfigID(f)
	for i := range 4 {
		if _, err := b.Put(ctx(t), at(sha(fmt.Sprint("c", i)), i), f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Put(ctx(t), store.Entry{Commit: sha("p"), Kind: store.KindPR, PR: 3, Time: t0}, f); err != nil {
		t.Fatal(err)
	}
	before := len(firstParents(t, s))
	removed, err := b.Prune(ctx(t), store.Policy{Keep: 2, PRAge: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Errorf("removed %d entries, want 3 (two old default-branch results, one old PR result): %+v", len(removed), removed)
	}
	files := s.Files("o/r", dataRef)
	for i, want := range []bool{false, false, true, true} {
		p := "results/" + sha(fmt.Sprint("c", i)) + "/" + id + ".json"
		if _, ok := files[p]; ok != want {
			t.Errorf("%s held %v after pruning, want %v", p, ok, want)
		}
	}
	if _, ok := files["pr/3/"+sha("p")+"/"+id+".json"]; ok {
		t.Error("the old PR result is still held")
	}
	if n := len(firstParents(t, s)); n != before+1 {
		t.Errorf("pruning made %d commits, want 1", n-before)
	}
	if c, _ := s.Commit("o/r", s.Ref("o/r", dataRef)); !strings.Contains(c.Message, "[skip ci]") {
		t.Errorf("prune commit message %q lacks [skip ci]", c.Message)
	}
	es, _ := b.List(ctx(t), store.Filter{})
	if len(es) != 2 {
		t.Errorf("index holds %d entries after pruning, want 2", len(es))
	}
	// Nothing left to prune: no commit.
	if _, err := b.Prune(ctx(t), store.Policy{Keep: 2}); err != nil {
		t.Fatal(err)
	}
	if n := len(firstParents(t, s)); n != before+1 {
		t.Errorf("a prune with nothing to remove made a commit")
	}
}
