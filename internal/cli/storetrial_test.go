package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// The tests of this file reproduce a user trial of the results store: each defect it found,
// then the fix.

// rewrite reads the results file at path, changes it with mutate and writes it back.
func rewrite(t *testing.T, path string, mutate func(*results.File)) {
	t.Helper()
	f := readResults(t, path)
	mutate(f)
	if err := results.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
}

// listed returns the entries of the store at dir.
func listed(t *testing.T, dir string) []store.Entry {
	t.Helper()
	es, err := store.NewDir(dir).List(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestStorePutChecksEngineCommit: store put refuses a file that measured another commit than
// --commit (a PR head's run stored as a default-branch baseline, an A/A rerun of c12 stored
// under c1), naming both; a file naming no commit gets --commit in the stored copy, and an
// abbreviation of --commit in the file is the same commit.
func TestStorePutChecksEngineCommit(t *testing.T) {
	st := filepath.Join(t.TempDir(), "st")
	files := matrixFiles(t, 4)
	rewrite(t, files[0], func(f *results.File) { f.Engine.Commit = commitID(12) })
	rewrite(t, files[1], func(f *results.File) { f.Engine.Commit = strings.ToUpper(commitID(1)[:12]) })
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"default-branch mismatch", []string{"--commit", commitID(1), files[0]}, ExitUsage,
			"measured engine commit " + commitID(12) + ", not --commit " + commitID(1)},
		{"aa mismatch", []string{"--commit", commitID(1), "--kind", "aa", files[0]}, ExitUsage, "store it under its own commit (--commit " + commitID(12) + ")"},
		{"pr mismatch", []string{"--commit", commitID(1), "--kind", "pr", "--pr", "3", files[0]}, ExitUsage, "not --commit"},
		{"own commit", []string{"--commit", commitID(12), files[0]}, ExitOK, ""},
		{"abbreviated in the file", []string{"--commit", commitID(1), files[1]}, ExitOK, ""},
		{"no commit in the file", []string{"--commit", commitID(2), files[2]}, ExitOK, "the stored copy records --commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(append([]string{"store", "put", "--store", st}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d and stderr saying %q\n%s", code, tc.code, tc.want, errOut)
			}
		})
	}
	es := listed(t, st)
	if len(es) != 3 {
		t.Fatalf("the store holds %d results, want the 3 accepted: %+v", len(es), es)
	}
	for _, e := range es {
		if e.Commit == commitID(1) && e.Kind != store.KindDefault {
			t.Errorf("a refused put stored %s", e.Path)
		}
	}
	f, _, err := store.NewDir(st).Get(context.Background(), commitID(2), es[0].ConfigID)
	if err != nil || f.Engine.Commit != commitID(2) {
		t.Errorf("the stored copy of a file without engine.commit: %v, commit %q; want %s", err, f.Engine.Commit, commitID(2))
	}
}

// TestStorePutKeepsEarlierRun: a second default-branch run of a commit and config keeps the
// first as an A/A rerun of that commit, under its run id, instead of overwriting it; putting the
// same file again only replaces it.
func TestStorePutKeepsEarlierRun(t *testing.T) {
	st := filepath.Join(t.TempDir(), "st")
	files := matrixFiles(t, 2) // run-0 and run-1 of one config
	put := func(p string) string {
		t.Helper()
		_, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(1), p)
		if code != 0 {
			t.Fatalf("store put: exit %d\n%s", code, errOut)
		}
		return errOut
	}
	put(files[0])
	put(files[0])
	if es := listed(t, st); len(es) != 1 {
		t.Fatalf("the same file put twice: %d entries, want 1: %+v", len(es), es)
	}
	errOut := put(files[1])
	if !strings.Contains(errOut, "kept it as an A/A rerun") {
		t.Errorf("the log does not say the earlier run was kept:\n%s", errOut)
	}
	byKind := map[store.Kind][]store.Entry{}
	for _, e := range listed(t, st) {
		byKind[e.Kind] = append(byKind[e.Kind], e)
	}
	if d, aa := byKind[store.KindDefault], byKind[store.KindAA]; len(d) != 1 || d[0].RunID != "run-1" || len(aa) != 1 || aa[0].RunID != "run-0" || aa[0].Commit != commitID(1) {
		t.Errorf("after a second run: default-branch %+v, A/A %+v; want run-1 as the result and run-0 kept as an A/A rerun of the commit", d, aa)
	}
	if _, _, code := runCLI("calibrate", "--store", st); code != 0 {
		t.Errorf("calibrate --store finds no A/A pair in the kept runs: exit %d", code)
	}
}

// baselineConfig writes a configuration of a short simulated baseline and returns its path.
func baselineConfig(t *testing.T, dir, storeDir string) string {
	t.Helper()
	cfg := filepath.Join(dir, "speedmatrix.yaml")
	yaml := "contexts: [1K]\nconcurrency: [1]\nprefill_contexts: none\nduration: 300ms\nmax_tokens: 16\nwarmup: 0\nquiet: true\nsim: {profile: tiny-40ms-8ms-4seats}\nstore: {dir: " + storeDir + "}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestBaselineReadsStoreFirst: with a damaged index.json, baseline fails before measuring (it
// measured the whole matrix first, then failed), and says how to repair the index.
func TestBaselineReadsStoreFirst(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "st")
	if err := os.MkdirAll(st, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st, store.IndexFile), []byte(`{"schema": "speedmatrix/store-index/v1", "entr`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "kept.json")
	start := time.Now()
	_, errOut, code := runCLI("baseline", "--config", baselineConfig(t, dir, st), "--commit", commitID(1), "-o", out)
	if code != ExitError || !strings.Contains(errOut, "nothing was measured") || !strings.Contains(errOut, "speedmatrix store reindex --store "+st) {
		t.Errorf("baseline on a damaged index: exit %d; want 1, nothing measured, and store reindex advised\n%s", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("baseline measured (wrote %s) before finding the store unreadable, in %v", out, time.Since(start))
	}
}

// TestBaselineKeepsResultsWhenStoringFails: when storing fails after the run, the results are
// kept in $TMPDIR/speedmatrix-<run-id>.json (the fallback run uses) and the error says the
// store put command that stores them later (they were deleted with the temporary folder). A
// second baseline of the commit keeps the first as an A/A rerun.
func TestBaselineKeepsResultsWhenStoringFails(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	st := filepath.Join(dir, "st")
	if err := os.MkdirAll(st, 0o755); err != nil {
		t.Fatal(err)
	}
	// The store reads (no index yet), but results/ is a file: the write fails.
	if err := os.WriteFile(filepath.Join(st, "results"), []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := baselineConfig(t, dir, st)
	_, errOut, code := runCLI("baseline", "--config", cfg, "--commit", commitID(1))
	kept, _ := filepath.Glob(filepath.Join(tmp, "speedmatrix-*.json"))
	if code != ExitError || len(kept) != 1 {
		t.Fatalf("baseline whose store write fails: exit %d, kept %q in TMPDIR; want exit 1 and the results kept\n%s", code, kept, errOut)
	}
	f := readResults(t, kept[0])
	want := "speedmatrix store put " + kept[0] + " --commit " + commitID(1) + " --config " + cfg
	if f.Engine.Commit != commitID(1) || !strings.Contains(errOut, want) {
		t.Errorf("kept results of commit %q; the error should say %q:\n%s", f.Engine.Commit, want, errOut)
	}

	// The store repaired, the kept file is stored as the error says; a second baseline keeps it.
	if err := os.Remove(filepath.Join(st, "results")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("store", "put", kept[0], "--commit", commitID(1), "--config", cfg); code != 0 {
		t.Fatalf("store put of the kept results: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCLI("baseline", "--config", cfg, "--commit", commitID(1)); code != 0 {
		t.Fatalf("second baseline: exit %d\n%s", code, errOut)
	}
	var aa []string
	for _, e := range listed(t, st) {
		if e.Kind == store.KindAA {
			aa = append(aa, e.RunID)
		}
	}
	if len(aa) != 1 || aa[0] != f.Run.ID {
		t.Errorf("A/A reruns after a second baseline: %q; want the first run, %s", aa, f.Run.ID)
	}
}

// TestStoreReindexCommand: store reindex rebuilds a damaged local index, lists the file it
// skipped, and refuses the data branch (whose index is restored from its history).
func TestStoreReindexCommand(t *testing.T) {
	st := filepath.Join(t.TempDir(), "st")
	files := matrixFiles(t, 3)
	for i, p := range files {
		if _, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(i), p); code != 0 {
			t.Fatalf("store put: %s", errOut)
		}
	}
	es := listed(t, st)
	if err := os.WriteFile(filepath.Join(st, filepath.FromSlash(es[0].Path)), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st, store.IndexFile), []byte("{\"schema\""), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, _ := runCLI("store", "list", "--store", st); !strings.Contains(errOut, "store reindex --store "+st) {
		t.Errorf("store list of a damaged index does not advise store reindex:\n%s", errOut)
	}
	out, errOut, code := runCLI("store", "reindex", "--store", st)
	if code != 0 || !strings.Contains(out, "skipped "+es[0].Path+"\n") || !strings.Contains(out, "indexed 2 results (2 default-branch, 0 pr, 0 aa)") ||
		!strings.Contains(errOut, es[0].Path) {
		t.Errorf("store reindex: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := listed(t, st); len(got) != 2 {
		t.Errorf("the rebuilt index holds %d entries, want 2", len(got))
	}
	if _, errOut, code := runCLI("store", "reindex", "--branch", "speedmatrix-data"); code != ExitUsage || !strings.Contains(errOut, "history") {
		t.Errorf("store reindex --branch: exit %d\n%s", code, errOut)
	}
}

// TestStoreReadersSkipUnreadable: one damaged history file made compare --store fail (with a
// hint to convert it with speedmatrix import), one truncated A/A rerun made calibrate --store
// fail; both are optional evidence, skipped with a warning naming the file. A damaged baseline
// still fails store get.
func TestStoreReadersSkipUnreadable(t *testing.T) {
	st := filepath.Join(t.TempDir(), "st")
	_, bp, hp := compareFiles(t, 1, "")
	hist := matrixFiles(t, 5)
	for i, p := range hist[:4] {
		if _, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(i), p); code != 0 {
			t.Fatalf("store put: %s", errOut)
		}
	}
	if _, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(3), "--kind", "aa", "--run-id", "again", hist[4]); code != 0 {
		t.Fatalf("store put --kind aa: %s", errOut)
	}
	es := listed(t, st)
	var damagedHist, damagedAA store.Entry
	for _, e := range es {
		switch {
		case e.Kind == store.KindAA:
			damagedAA = e
		case e.Commit == commitID(1):
			damagedHist = e
		}
	}
	for _, e := range []store.Entry{damagedHist, damagedAA} {
		if err := os.WriteFile(filepath.Join(st, filepath.FromSlash(e.Path)), []byte("Speed test matrix, truncated"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runCLI("compare", "--store", st, bp, hp)
	if code == ExitError || !strings.Contains(errOut, "noise from 3 default-branch results") || !strings.Contains(errOut, damagedHist.Path) ||
		strings.Contains(errOut, "speedmatrix import") {
		t.Errorf("compare --store with a damaged history file: exit %d; want history from the other 3 and a warning naming %s\n%s\n%s", code, damagedHist.Path, out, errOut)
	}
	// calibrate --store: commit 3's A/A rerun is truncated; a second A/A rerun of commit 2 makes a pair.
	if _, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(2), "--kind", "aa", "--run-id", "two", hist[4]); code != 0 {
		t.Fatalf("store put --kind aa: %s", errOut)
	}
	out, errOut, code = runCLI("calibrate", "--store", st, "--format", "json")
	if code != 0 || !strings.Contains(errOut, damagedAA.Path) {
		t.Errorf("calibrate --store with a truncated A/A rerun: exit %d; want a warning naming %s\n%s\n%s", code, damagedAA.Path, out, errOut)
	}
	var rep struct {
		Commits  int      `json:"commits"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Commits != 1 || len(rep.Warnings) != 1 {
		t.Errorf("calibrate --store --format json: %v, %+v; want 1 commit and 1 warning", err, rep)
	}
	if _, errOut, code := runCLI("store", "get", "--store", st, commitID(1), damagedHist.ConfigID); code != ExitError || !strings.Contains(errOut, "is damaged") {
		t.Errorf("store get of a damaged baseline: exit %d; want an error\n%s", code, errOut)
	}
}

// TestStoreIDs: ids a user types are matched against what the store holds, and a miss says what
// it holds: the 12-digit commit store list prints, a config id calibrate does not know, a
// config id a commit has no result of.
func TestStoreIDs(t *testing.T) {
	st := filepath.Join(t.TempDir(), "st")
	files := matrixFiles(t, 2)
	a := "944a2849b932" + strings.Repeat("0", 28)
	b := "944a2849b932" + strings.Repeat("1", 28)
	for i, c := range []string{a, b} {
		if _, errOut, code := runCLI("store", "put", "--store", st, "--commit", c, files[i]); code != 0 {
			t.Fatalf("store put: %s", errOut)
		}
	}
	id := listed(t, st)[0].ConfigID
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string // in stdout, stderr
	}{
		{"list a 13-digit abbreviation", []string{"store", "list", "--commit", "944a2849b9320"}, ExitOK, a[:12], ""},
		{"list an ambiguous abbreviation", []string{"store", "list", "--commit", "944a2849b932"}, ExitUsage, "", "abbreviates 2 stored commits (" + a + ", " + b + ")"},
		{"list an unknown config id", []string{"store", "list", "--config-id", "nope"}, ExitOK, "TIME", "no stored result matches --config-id nope; the store holds 2 results (2 default-branch) of config ids " + id + " (2)"},
		{"list an unknown commit", []string{"store", "list", "--commit", "abcdef0123"}, ExitOK, "", "no stored result matches --commit abcdef0123; the store holds"},
		{"get an abbreviation", []string{"store", "get", "944a2849b9321", id}, ExitOK, `"schema"`, ""},
		{"get a wrong config id", []string{"store", "get", "944a2849b9321", "wrongid"}, ExitError, "", "has no default-branch result of config wrongid; its default-branch results are of config ids " + id},
		{"get an unknown commit", []string{"store", "get", "abcdef0123", id}, ExitUsage, "", "COMMIT abcdef0123: not in the store"},
		{"get a revision", []string{"store", "get", "no-such-rev", id}, ExitUsage, "", `COMMIT "no-such-rev" is not a full commit id`},
		{"calibrate an unknown config id", []string{"calibrate", "--store", st, "--config-id", "deadbeefdeadbeef"}, ExitError, "", "no such config in the store: deadbeefdeadbeef; it holds runs of " + id + " (2 runs)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] == "store" {
				args = append([]string{"store", args[1], "--store", st}, args[2:]...)
			}
			out, errOut, code := runCLI(args...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
				t.Errorf("%v: exit %d, want %d; stdout should hold %q, stderr %q\n%s\n%s", args, code, tc.code, tc.out, tc.err, out, errOut)
			}
			if strings.Contains(errOut, "--commit") && args[1] == "get" {
				t.Errorf("store get's error speaks of --commit; its commit is the COMMIT argument:\n%s", errOut)
			}
		})
	}
}
