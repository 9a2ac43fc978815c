package sitedir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite checks that the files land under the folder, nested folders made, and that a path
// outside it is refused before anything is written.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, map[string][]byte{"index.html": []byte("i"), "a1b2/charts/x.svg": []byte("s")}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"index.html": "i", "a1b2/charts/x.svg": "s"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	for _, bad := range []string{"../x.html", "/etc/x", `a\..\..\x`} {
		out := t.TempDir()
		if err := Write(out, map[string][]byte{bad: []byte("x")}); err == nil {
			t.Errorf("%q: written, want refused", bad)
		}
	}
}
