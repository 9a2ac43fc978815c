package ghbot

import (
	"context"
	"testing"
)

// TestUpsertIssueOnePerMarker: the first call opens an issue with the label; the next edits it;
// an issue with the label but without the marker is left alone.
func TestUpsertIssueOnePerMarker(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const marker = "<!-- test:marker -->"
	other, created, err := e.c.UpsertIssue(ctx, helloRepo, "speedmatrix", "<!-- other -->", "other", "<!-- other -->\nx")
	if err != nil || !created {
		t.Fatalf("other issue: %d %v %v", other, created, err)
	}
	first, created, err := e.c.UpsertIssue(ctx, helloRepo, "speedmatrix", marker, "title 1", marker+"\none")
	if err != nil || !created || first == other {
		t.Fatalf("first: %d %v %v", first, created, err)
	}
	second, created, err := e.c.UpsertIssue(ctx, helloRepo, "speedmatrix", marker, "title 2", marker+"\ntwo")
	if err != nil || created || second != first {
		t.Fatalf("second: %d %v %v; want issue %d edited", second, created, err, first)
	}
	issues := e.srv.Issues(testRepo)
	if len(issues) != 2 {
		t.Fatalf("%d issues, want 2: %+v", len(issues), issues)
	}
	for _, i := range issues {
		switch i.Number {
		case first:
			if i.Title != "title 2" || i.Body != marker+"\ntwo" || len(i.Labels) != 1 || i.Labels[0] != "speedmatrix" {
				t.Errorf("the marked issue: %+v", i)
			}
		case other:
			if i.Title != "other" {
				t.Errorf("the other issue was changed: %+v", i)
			}
		}
	}
	if _, _, err := e.c.UpsertIssue(ctx, helloRepo, "speedmatrix", marker, "t", "no marker"); err == nil {
		t.Error("a body without its marker was accepted")
	}
}
