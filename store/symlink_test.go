package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/store"
)

// TestDirRefusesLinks (issue 34, item 7): a symbolic link planted in the store's folder (here
// at its index, pointing at a file elsewhere) is not written through: the write is refused,
// the link's target keeps its bytes. Before, the rename replaced the link, or a write that
// followed it rewrote the file it named.
func TestDirRefusesLinks(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := store.NewDir(root)
	if _, err := s.Put(ctx, at(sha("a"), 0), runFile(t)); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(root, store.IndexFile)
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(outside, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, index); err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(ctx, at(sha("b"), 1), runFile(t))
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("put through a linked index: %v, want a refusal naming the link", err)
	}
	if after, _ := os.ReadFile(outside); string(after) != string(data) {
		t.Errorf("the link's target was rewritten")
	}
	if st, err := os.Lstat(index); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced (%v)", err)
	}
}
