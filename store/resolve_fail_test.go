package store_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestResolveListingFails: the merge-base's own results are found without the commit
// listing, so a listing that fails (a 500) or hangs (a timeout) cannot hide them; when the
// merge-base has none, the failed listing is an error naming the request and its status, never
// "no baseline".
func TestResolveListingFails(t *testing.T) {
	g := resolveGraph()
	for _, fault := range []string{"500", "timeout"} {
		for _, tc := range []struct {
			name   string
			stored string // the commit with results
			want   string // "": found at the merge-base; else a substring of the error
		}{
			{name: "merge-base has results", stored: "m5"},
			{name: "merge-base lacks results", stored: "m2", want: map[string]string{"500": "answered HTTP 500", "timeout": "timed out"}[fault]},
		} {
			t.Run(fault+"/"+tc.name, func(t *testing.T) {
				srv, gh := fakeGitHub(t)
				ids := map[string]string{}
				for i, n := range g.nodes {
					var parents []string
					for _, p := range n.parents {
						parents = append(parents, ids[p])
					}
					ids[n.name] = srv.AddCommit("o/r", ghtest.GitCommit{SHA: sha(n.name), Parents: parents, Message: n.name, Date: t0.Add(time.Duration(i) * time.Minute)}, nil)
				}
				srv.SetRef("o/r", "heads/main", ids["deep249"])
				gc := store.GitHubCommits{GH: gh, Owner: "o", Repo: "r"}
				switch fault {
				case "500":
					srv.Fail(ghtest.Fault{Method: http.MethodGet, Path: "/repos/o/r/commits", Status: http.StatusInternalServerError, Times: 100})
				case "timeout":
					release := make(chan struct{})
					t.Cleanup(func() { close(release) })
					srv.OnGit(func(method, path string) {
						if method == http.MethodGet && path == "/repos/o/r/commits" {
							<-release // hangs until the test ends: the listing's own timeout ends the wait
						}
					})
					gc.PageTimeout = 50 * time.Millisecond
				}
				s := store.NewDir(t.TempDir())
				f := runFile(t)
				if _, err := s.Put(ctx(t), at(ids[tc.stored], 1), f); err != nil {
					t.Fatal(err)
				}
				b, err := store.Resolve(ctx(t), gc, s, store.Query{ConfigID: store.ConfigID(f), Head: ids["a0"], Base: "main"})
				if tc.want == "" {
					if err != nil || b.Commit != ids["m5"] || b.Distance != 0 {
						t.Fatalf("Resolve = %s, %v; want the merge-base m5's results", b.Describe(), err)
					}
					if n := len(srv.State().CallsTo(http.MethodGet, "/repos/o/r/commits")); n != 0 {
						t.Errorf("%d commit listings for the merge-base's own results; want none", n)
					}
					return
				}
				if err == nil {
					t.Fatalf("Resolve = %s, nil error; want an error saying %q", b.Describe(), tc.want)
				}
				for _, w := range []string{tc.want, "/repos/o/r/commits", "could not be listed"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
			})
		}
	}
}
