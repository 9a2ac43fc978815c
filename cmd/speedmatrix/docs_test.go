package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// userDoc is one markdown file a user reads: README.md or a page of docs/.
type userDoc struct {
	Path string // relative to the repository's root, e.g. docs/commands.md
	Text string
}

// userDocs does return README.md and every docs/*.md (the examples under docs/example are
// rendered output, not text a user is told to paste), README.md first.
func userDocs(t *testing.T) []userDoc {
	t.Helper()
	paths, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(paths) < 5 {
		t.Fatalf("docs/*.md: %d files (%v); the layout changed", len(paths), err)
	}
	slices.Sort(paths)
	out := []userDoc{{Path: "README.md", Text: readDoc(t, "README.md")}}
	for _, p := range paths {
		rel, _ := filepath.Rel("../..", p)
		out = append(out, userDoc{Path: filepath.ToSlash(rel), Text: readDoc(t, rel)})
	}
	return out
}

// readDoc does return the text of a file named relative to the repository's root.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
