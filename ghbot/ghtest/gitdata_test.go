package ghtest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

func statusOf(resp *github.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// TestGitDataFastForward checks that the fake refuses a ref update that is not a fast forward
// (unless forced), and a ref creation of an existing ref, as GitHub does.
func TestGitDataFastForward(t *testing.T) {
	s := newServer(t)
	gh := client(s, "tok")
	ctx := context.Background()
	root := s.AddCommit("o/r", ghtest.GitCommit{Message: "root"}, map[string][]byte{"a.txt": []byte("a")})
	s.SetRef("o/r", "heads/main", root)

	blob, _, err := gh.Git.CreateBlob(ctx, "o", "r", &github.Blob{Content: github.String("Yg=="), Encoding: github.String("base64")})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := s.Commit("o/r", root)
	tree, _, err := gh.Git.CreateTree(ctx, "o", "r", base.Tree, []*github.TreeEntry{
		{Path: github.String("dir/b.txt"), Mode: github.String("100644"), Type: github.String("blob"), SHA: blob.SHA}})
	if err != nil {
		t.Fatal(err)
	}
	child, _, err := gh.Git.CreateCommit(ctx, "o", "r", &github.Commit{Message: github.String("child"), Tree: tree, Parents: []*github.Commit{{SHA: github.String(root)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	orphan, _, err := gh.Git.CreateCommit(ctx, "o", "r", &github.Commit{Message: github.String("orphan"), Tree: tree}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Commit("o/r", orphan.GetSHA()); len(c.Parents) != 0 {
		t.Errorf("a commit without parents got %v", c.Parents)
	}
	ref := func(sha string) *github.Reference {
		return &github.Reference{Ref: github.String("refs/heads/main"), Object: &github.GitObject{SHA: github.String(sha)}}
	}
	if _, resp, err := gh.Git.UpdateRef(ctx, "o", "r", ref(orphan.GetSHA()), false); err == nil || statusOf(resp) != http.StatusUnprocessableEntity {
		t.Errorf("non-fast-forward update: %v, want 422", err)
	}
	if _, _, err := gh.Git.UpdateRef(ctx, "o", "r", ref(child.GetSHA()), false); err != nil {
		t.Errorf("fast-forward update: %v", err)
	}
	if _, resp, err := gh.Git.CreateRef(ctx, "o", "r", ref(root)); err == nil || statusOf(resp) != http.StatusUnprocessableEntity {
		t.Errorf("creating an existing ref: %v, want 422", err)
	}
	if _, _, err := gh.Git.UpdateRef(ctx, "o", "r", ref(orphan.GetSHA()), true); err != nil {
		t.Errorf("forced update: %v", err)
	}
	files := s.Files("o/r", "heads/main")
	if string(files["a.txt"]) != "a" || string(files["dir/b.txt"]) != "b" {
		t.Errorf("files at main: %q", files)
	}
	// Deleting a file: a tree entry with sha null on a base tree.
	del, _, err := gh.Git.CreateTree(ctx, "o", "r", tree.GetSHA(), []*github.TreeEntry{{Path: github.String("a.txt"), Mode: github.String("100644"), Type: github.String("blob")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range del.Entries {
		if e.GetPath() == "a.txt" {
			t.Error("the deleted file is still in the tree")
		}
	}
	// The root tree lists the directory as a tree whose sha can be read.
	top, _, err := gh.Git.GetTree(ctx, "o", "r", del.GetSHA(), false)
	if err != nil || len(top.Entries) != 1 || top.Entries[0].GetType() != "tree" {
		t.Fatalf("GetTree: %v %+v", err, top)
	}
	if sub, _, err := gh.Git.GetTree(ctx, "o", "r", top.Entries[0].GetSHA(), false); err != nil || len(sub.Entries) != 1 || sub.Entries[0].GetPath() != "b.txt" {
		t.Errorf("subtree: %v %+v", err, sub)
	}
}

// TestGitCompareAndListCommits checks the merge base and the paginated listing by sha.
func TestGitCompareAndListCommits(t *testing.T) {
	s := newServer(t)
	gh := client(s, "tok")
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	prev := ""
	var main []string
	for i := range 150 {
		var parents []string
		if prev != "" {
			parents = []string{prev}
		}
		prev = s.AddCommit("o/r", ghtest.GitCommit{Parents: parents, Message: "m", Date: t0.Add(time.Duration(i) * time.Minute)}, nil)
		main = append(main, prev)
	}
	s.SetRef("o/r", "heads/main", prev)
	head := s.AddCommit("o/r", ghtest.GitCommit{Parents: []string{main[100]}, Message: "pr", Date: t0.Add(time.Hour * 24)}, nil)
	cmp, _, err := gh.Repositories.CompareCommits(ctx, "o", "r", "main", head, nil)
	if err != nil || cmp.GetMergeBaseCommit().GetSHA() != main[100] || cmp.GetAheadBy() != 1 || cmp.GetBehindBy() != 49 {
		t.Errorf("compare main...head: %v, merge base %s (want %s), ahead %d, behind %d", err, cmp.GetMergeBaseCommit().GetSHA(), main[100], cmp.GetAheadBy(), cmp.GetBehindBy())
	}
	opts := &github.CommitsListOptions{SHA: head, ListOptions: github.ListOptions{PerPage: 100}}
	var got []*github.RepositoryCommit
	for {
		page, resp, err := gh.Repositories.ListCommits(ctx, "o", "r", opts)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(got) != 102 || got[0].GetSHA() != head || got[1].GetSHA() != main[100] || got[0].Parents[0].GetSHA() != main[100] {
		t.Errorf("listing from the PR head: %d commits, want 102, newest first with parents", len(got))
	}
}
