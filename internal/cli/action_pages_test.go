package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// TestActionPagesMode: mode pages writes the store's history page into artifact-dir, its series
// along the default branch (c1…c6 backfilled after c7…c12 still read fast, then slow), with the
// regression's first commit, a chart per measured cell and the output site; an empty store gets
// a page that says nothing is stored yet.
func TestActionPagesMode(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.event("push", payload(t, "push/with-new-branch.payload.json"))
	site := e.vars["INPUT_ARTIFACT-DIR"]

	out, stderr, err := e.run(context.Background(), "--mode", "pages")
	if err != nil || out["site"] != site {
		t.Fatalf("empty store: %v, outputs %v\n%s", err, out, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(site, "index.html")); err != nil || !strings.Contains(string(b), "No default-branch results are stored yet") {
		t.Errorf("empty store: index.html %v\n%s", err, b)
	}

	day := time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC)
	parent := prBase
	for i := 1; i <= 12; i++ {
		parent = e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: seqSHA(i), Message: fmt.Sprint("c", i), Parents: []string{parent}, Date: day.Add(time.Duration(i) * time.Hour)}, nil)
	}
	e.srv.SetRef(actRepo, "heads/master", seqSHA(12))
	for i := 7; i <= 12; i++ {
		e.putScaled(seqSHA(i), 1)
	}
	for i := 1; i <= 6; i++ {
		e.putScaled(seqSHA(i), 1.25)
	}
	out, stderr, err = e.run(context.Background(), "--mode", "pages")
	if err != nil || out["site"] != site {
		t.Fatalf("pages: %v, outputs %v\n%s", err, out, stderr)
	}
	index, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(index)
	for _, want := range []string{"12 runs", "ordered along the first parents of the default branch", `title="` + seqSHA(7) + `"`, "regression"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	charts, _ := filepath.Glob(filepath.Join(site, "charts", "*.svg"))
	if len(charts) == 0 {
		t.Errorf("no charts written")
	}
	for _, c := range charts {
		if !strings.Contains(page, `src="charts/`+filepath.Base(c)+`"`) {
			t.Errorf("the page does not show %s", filepath.Base(c))
		}
	}
	if len(e.srv.Issues(actRepo)) != 0 {
		t.Errorf("mode pages opened an issue: it only reads the store")
	}
}
