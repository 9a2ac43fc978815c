package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const refReport = "../testdata/reference/glm-5.3-flash-nvfp4-h200nvl-x2.txt"

// golden compares got with the golden file, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

func importFile(t *testing.T, path string) *results.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := results.Import(fh, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func markdown(t *testing.T, f *results.File) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := NewPage(f).Markdown(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReferenceGolden imports the reference report and renders it: the page is pinned by a
// golden file, and every row of the original "All measurements" table must come out identical,
// in the same order.
func TestReferenceGolden(t *testing.T) {
	f := importFile(t, refReport)
	got := markdown(t, f)
	golden(t, "../testdata/reference/glm-5.3-flash-nvfp4-h200nvl-x2.md", got)

	ref, err := os.ReadFile(refReport)
	if err != nil {
		t.Fatal(err)
	}
	var refRows []string
	for _, l := range strings.Split(string(ref), "\n") {
		if strings.HasPrefix(l, "| Prefill |") || strings.HasPrefix(l, "| Sustained decode |") {
			refRows = append(refRows, l)
		}
	}
	if len(refRows) != 9+64 {
		t.Fatalf("found %d measurement rows in the reference, want 73", len(refRows))
	}
	var gotRows []string
	for _, l := range strings.Split(string(got), "\n") {
		if strings.HasPrefix(l, "| Prefill |") || strings.HasPrefix(l, "| Sustained decode |") {
			gotRows = append(gotRows, l)
		}
	}
	if diff := cmp.Diff(refRows, gotRows); diff != "" {
		t.Errorf("All measurements rows differ from the reference (-ref +rendered):\n%s", diff)
	}
}

// squash removes the layout that differs between the reference's page text and markdown.
func squash(s string) string {
	s = strings.ReplaceAll(s, "<br>", "")
	return strings.Join(strings.Fields(s), "")
}

// TestReferenceMatrixAndPrefill checks the rendered decode matrix and prefill list against the
// reference's own (flattened) matrix and list, cell by cell.
func TestReferenceMatrixAndPrefill(t *testing.T) {
	got := string(markdown(t, importFile(t, refReport)))
	ref, err := os.ReadFile(refReport)
	if err != nil {
		t.Fatal(err)
	}
	matrixRow := regexp.MustCompile(`^\| \d+K \|`)
	var refMatrix, gotMatrix [][]string
	for _, l := range strings.Split(string(ref), "\n") {
		if matrixRow.MatchString(l) && strings.Count(l, "|") > 5 {
			refMatrix = append(refMatrix, strings.Split(squash(l), "|"))
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if matrixRow.MatchString(l) && strings.Count(l, "|") > 5 {
			gotMatrix = append(gotMatrix, strings.Split(squash(l), "|"))
		}
	}
	if len(refMatrix) != 8 {
		t.Fatalf("reference matrix has %d rows, want 8", len(refMatrix))
	}
	if diff := cmp.Diff(refMatrix, gotMatrix); diff != "" {
		t.Errorf("decode matrix differs (-ref +rendered):\n%s", diff)
	}

	// The reference's prefill list reads "8K context12.2K671 ms TTFT" (ambiguous to parse:
	// "9,819104,385 ms"); ours is a table row "| 8K | 12.2K | 671 ms |". Flatten ours the
	// reference's way and find it there.
	prefillRow := regexp.MustCompile(`^\| (\d+K) \| ([\d.,]+K?) \| ([\d,]+ ms) \|$`)
	n := 0
	for _, l := range strings.Split(got, "\n") {
		if m := prefillRow.FindStringSubmatch(l); m != nil {
			n++
			flat := m[1] + " context" + m[2] + m[3] + " TTFT"
			if !strings.Contains(string(ref), flat) {
				t.Errorf("rendered prefill entry %q (%q flattened) is not in the reference", l, flat)
			}
		}
	}
	if want := len(regexp.MustCompile(`\d+K context\d`).FindAllString(string(ref), -1)); n != want || n != 9 {
		t.Errorf("rendered prefill list has %d entries, the reference %d (want 9)", n, want)
	}
}

// TestRoundTrip checks render → import → render is a fixed point, and the results JSON too.
func TestRoundTrip(t *testing.T) {
	f1 := importFile(t, refReport)
	md1 := markdown(t, f1)
	f2, err := results.Import(bytes.NewReader(md1), "rendered.md")
	if err != nil {
		t.Fatalf("importing the rendered page: %v", err)
	}
	md2 := markdown(t, f2)
	if diff := cmp.Diff(string(md1), string(md2)); diff != "" {
		t.Errorf("render → import → render is not a fixed point:\n%s", diff)
	}
	f2.Run.ImportedFrom = f1.Run.ImportedFrom
	if diff := cmp.Diff(f1, f2); diff != "" {
		t.Errorf("import of the rendered page differs from the first import:\n%s", diff)
	}
}

func TestJSONAndCSVGolden(t *testing.T) {
	f := importFile(t, refReport)
	var j, c bytes.Buffer
	if err := NewPage(f).JSON(&j); err != nil {
		t.Fatal(err)
	}
	if err := CSV(&c, f); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/reference-page.json", j.Bytes())
	golden(t, "testdata/reference.csv", c.Bytes())
}
