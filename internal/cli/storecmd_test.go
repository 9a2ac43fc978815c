package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// commitID returns a made-up full commit id.
func commitID(i int) string { return fmt.Sprintf("%040x", 0xc0ffee00+i) }

// runCLIEnv runs the CLI with an environment.
func runCLIEnv(env map[string]string, args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, &out, &errOut, func(k string) string { return env[k] })
	if err != nil && !Quiet(err) {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), ExitCode(err)
}

// matrixFiles writes n synthetic runs of one server (calibrate's matrix) and returns their paths.
func matrixFiles(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	m := calibrate.NewMatrix(31, 1)
	r := rand.New(rand.NewPCG(7, 1))
	var out []string
	for i := range n {
		f := m.Run(r, fmt.Sprint("run-", i), nil)
		p := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		if err := results.WriteFile(p, f); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestStoreCommands(t *testing.T) {
	st := filepath.Join(t.TempDir(), "st")
	files := matrixFiles(t, 3)
	for i, p := range files {
		out, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(i), p)
		if code != 0 || !strings.HasPrefix(out, "results/"+commitID(i)+"/") {
			t.Fatalf("store put: exit %d, %q\n%s", code, out, errOut)
		}
	}
	if _, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(9), "--kind", "pr", "--pr", "5", files[0]); code != 0 {
		t.Fatalf("store put --kind pr: %d\n%s", code, errOut)
	}

	out, _, code := runCLI("store", "list", "--store", st, "--format", "json")
	var es []store.Entry
	if code != 0 || json.Unmarshal([]byte(out), &es) != nil || len(es) != 4 {
		t.Fatalf("store list --format json: exit %d, %d entries\n%s", code, len(es), out)
	}
	id := es[0].ConfigID
	out, _, _ = runCLI("store", "list", "--store", st, "--kind", "default-branch")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "TIME") {
		t.Errorf("store list --kind default-branch: want a header and 3 rows\n%s", out)
	}

	out, _, code = runCLI("store", "get", "--store", st, commitID(1), id)
	if f, err := results.Decode([]byte(out)); code != 0 || err != nil || f.Run.ID != "run-1" {
		t.Errorf("store get: exit %d, %v", code, err)
	}

	out, _, code = runCLI("store", "prune", "--store", st, "--keep", "1", "--dry-run")
	if code != 0 || strings.Count(out, "would remove") != 2 {
		t.Errorf("store prune --dry-run: exit %d\n%s", code, out)
	}
	out, _, code = runCLI("store", "prune", "--store", st, "--keep", "1")
	if code != 0 || strings.Count(out, "removed") != 2 || strings.Contains(out, commitID(2)) {
		t.Errorf("store prune --keep 1: exit %d (must keep the newest, %s)\n%s", code, commitID(2)[:8], out)
	}
	if _, _, code := runCLI("store", "get", "--store", st, commitID(2), id); code != 0 {
		t.Errorf("the current baseline is gone after prune")
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"store", "list"}, "no store"},
		{[]string{"store", "list", "--store", st, "--branch", "d"}, "not both"},
		{[]string{"store", "list", "--branch", "d"}, "--repo"},
		{[]string{"store", "list", "--branch", "d", "--repo", "o/r"}, "GITHUB_TOKEN"},
		{[]string{"store", "put", "--store", st, "--commit", "zzz", files[0]}, "--commit"},
		{[]string{"store", "put", "--store", st, "--commit", commitID(1), "--kind", "pr", files[0]}, "pull request's number"},
	} {
		_, errOut, code := runCLI(tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want an error saying %q\n%s", tc.args, code, tc.want, errOut)
		}
	}
}

// TestStoreOnDataBranch stores and lists through --branch against the fake GitHub API.
func TestStoreOnDataBranch(t *testing.T) {
	s := ghtest.New(t, ghtest.Enterprise())
	s.AddToken("tok", ghtest.ActionsLogin)
	env := map[string]string{"GITHUB_TOKEN": "tok", "GITHUB_API_URL": s.URL, "GITHUB_REPOSITORY": "o/r"}
	files := matrixFiles(t, 1)
	if _, errOut, code := runCLIEnv(env, "store", "put", "--branch", "speedmatrix-data", "--commit", commitID(0), files[0]); code != 0 {
		t.Fatalf("store put --branch: exit %d\n%s", code, errOut)
	}
	held := s.Files("o/r", "heads/speedmatrix-data")
	if _, ok := held["index.json"]; !ok || len(held) != 2 {
		t.Errorf("the data branch holds %d files, want the results and index.json", len(held))
	}
	out, _, code := runCLIEnv(env, "store", "list", "--branch", "speedmatrix-data")
	if code != 0 || !strings.Contains(out, commitID(0)[:12]) {
		t.Errorf("store list --branch: exit %d\n%s", code, out)
	}
}

// TestStorePruneOnDataBranchAlongDefaultBranch: `store prune --branch` ranks the results along
// the repository's default branch (its first parents on GitHub): the backfilled result of an
// old commit, measured last, goes first; the tip's stays.
func TestStorePruneOnDataBranchAlongDefaultBranch(t *testing.T) {
	s := ghtest.New(t, ghtest.Enterprise())
	s.AddToken("tok", ghtest.ActionsLogin)
	s.AddRepo(ghtest.Repo{Owner: "o", Name: "r", DefaultBranch: "main"})
	day := time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC)
	var line []string // m1 ← m2 ← m3 (main)
	parent := []string(nil)
	for i := 1; i <= 3; i++ {
		c := s.AddCommit("o/r", ghtest.GitCommit{SHA: commitID(i), Message: fmt.Sprint("m", i), Parents: parent, Date: day.Add(time.Duration(i) * time.Hour)}, nil)
		line, parent = append(line, c), []string{c}
	}
	s.SetRef("o/r", "heads/main", line[2])
	gh, err := github.NewClient(nil).WithAuthToken("tok").WithEnterpriseURLs(s.URL, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := readResults(t, matrixFiles(t, 1)[0])
	data := store.NewBranch(gh, "o", "r")
	for _, x := range []struct {
		commit string
		hours  int
	}{{line[1], 1}, {line[2], 2}, {line[0], 3}} { // m1 backfilled last
		if _, err := data.Put(context.Background(), store.Entry{Commit: x.commit, Time: day.Add(time.Duration(x.hours) * time.Hour)}, f); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"GITHUB_TOKEN": "tok", "GITHUB_API_URL": s.URL, "GITHUB_REPOSITORY": "o/r"}
	out, errOut, code := runCLIEnv(env, "store", "prune", "--branch", "speedmatrix-data", "--keep", "2", "--dry-run")
	if code != 0 || strings.Count(out, "would remove") != 1 || !strings.Contains(out, "results/"+line[0]+"/") {
		t.Errorf("store prune --branch --keep 2: exit %d, want m1's result (the backfill) alone removed\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "first parents of the default branch of o/r") {
		t.Errorf("the log does not say how recency was decided:\n%s", errOut)
	}
}

// TestCompareStoreHistory checks that compare --store takes its noise from the store's
// default-branch results when it holds enough of them, and says it used the prior otherwise.
func TestCompareStoreHistory(t *testing.T) {
	st := filepath.Join(t.TempDir(), "st")
	_, bp, hp := compareFiles(t, 1, "")
	hist := matrixFiles(t, 4)
	put := func(i int) {
		if _, errOut, code := runCLI("store", "put", "--store", st, "--commit", commitID(i), hist[i]); code != 0 {
			t.Fatalf("store put: %s", errOut)
		}
	}
	put(0)
	put(1)
	out, errOut, code := runCLI("compare", "--store", st, bp, hp)
	if code == ExitError || strings.Contains(out, "history: ") || !strings.Contains(errOut, "fewer than 3") {
		t.Errorf("compare --store with 2 results: exit %d; want the prior and a note\n%s\n%s", code, out, errOut)
	}
	put(2)
	put(3)
	out, errOut, code = runCLI("compare", "--store", st, bp, hp)
	if code == ExitError || !strings.Contains(out, "history: ") || !strings.Contains(errOut, "noise from 4 default-branch results") {
		t.Errorf("compare --store with 4 results: exit %d; want history noise\n%s\n%s", code, out, errOut)
	}
	c := filepath.Join(t.TempDir(), "c.json")
	runCLI("compare", "--store", st, "-o", c, bp, hp)
	if cf, err := results.ReadComparisonFile(c); err != nil || cf.Settings.HistoryFiles != 4 {
		t.Errorf("comparison file: %v, history files %v; want 4", err, cf)
	}
	if _, errOut, code := runCLI("compare", "--store", st, "--history", st, bp, hp); code != ExitUsage || !strings.Contains(errOut, "not both") {
		t.Errorf("--store with --history: exit %d\n%s", code, errOut)
	}
}

// TestBaselineMeasuresAndStores runs `speedmatrix baseline` against the built-in simulator with
// a small configuration and checks the stored default-branch result.
func TestBaselineMeasuresAndStores(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator for a few seconds")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "speedmatrix.yaml")
	if err := os.WriteFile(cfg, []byte("contexts: [8K]\nconcurrency: [1]\nprefill_contexts: none\nduration: 1s\nwarmup: 0\nquiet: true\nsim: {speedup: 20}\nstore: {dir: "+filepath.Join(dir, "st")+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("baseline", "--config", cfg, "--commit", commitID(1), "-o", filepath.Join(dir, "kept.json"))
	if code != 0 {
		t.Fatalf("baseline: exit %d\n%s", code, errOut)
	}
	s := store.NewDir(filepath.Join(dir, "st"))
	kept := readResults(t, filepath.Join(dir, "kept.json"))
	f, e, err := s.Get(context.Background(), commitID(1), store.ConfigID(kept))
	if err != nil {
		t.Fatalf("the baseline is not in the store: %v\n%s", err, out)
	}
	if f.Engine.Commit != commitID(1) || e.Kind != store.KindDefault || strings.TrimSpace(out) != e.Path {
		t.Errorf("stored engine commit %q, kind %s, printed %q (entry path %s)", f.Engine.Commit, e.Kind, out, e.Path)
	}
	if _, errOut, code := runCLI("baseline", "--config", cfg); code != ExitUsage || !strings.Contains(errOut, "--commit") {
		t.Errorf("baseline without --commit: exit %d\n%s", code, errOut)
	}
}

// TestBranchHelpPermission: the --branch help of the commands that only read the data branch
// (history, store list, store get, compare) asks for contents: read, not the contents: write a
// put or prune needs (issue 25: reads were told to need write).
func TestBranchHelpPermission(t *testing.T) {
	for _, args := range [][]string{{"history"}, {"store", "list"}, {"store", "get"}, {"compare"}, {"store", "put"}} {
		out, _, code := runCLI(append(args, "--help")...)
		if code != ExitOK {
			t.Fatalf("%v --help: exit %d", args, code)
		}
		var line string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "--branch string") {
				line = l
			}
		}
		if !strings.Contains(line, "contents: read") {
			t.Errorf("%v --help: the --branch line %q does not say a read needs contents: read", args, line)
		}
		if args[0] != "compare" && !strings.Contains(line, "contents: write to change it (store put, store prune, baseline)") {
			t.Errorf("%v --help: the --branch line %q does not say which commands need contents: write", args, line)
		}
	}
}

// TestStoreGetWithoutConfigID: store get COMMIT takes the commit's one default-branch result;
// a commit with results of two configs needs the id, and the usage error lists both.
func TestStoreGetWithoutConfigID(t *testing.T) {
	f, err := results.ReadFile("../../store/testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "st")
	st := store.NewDir(dir)
	sha := strings.Repeat("ab", 20)
	ctx := context.Background()
	if _, err := st.Put(ctx, store.Entry{Commit: sha, Kind: store.KindDefault}, f); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("store", "get", "--store", dir, sha[:12])
	if code != ExitOK || !strings.Contains(out, `"schema": "speedmatrix/results/v1"`) {
		t.Fatalf("one config: exit %d, %q", code, errOut)
	}
	other := *f
	other.Hardware.GPU = "H100" // another config
	if _, err := st.Put(ctx, store.Entry{Commit: sha, Kind: store.KindDefault}, &other); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCLI("store", "get", "--store", dir, sha[:12])
	if code != ExitUsage || !strings.Contains(errOut, "has default-branch results of 2 configs (") || !strings.Contains(errOut, store.ConfigID(f)) || !strings.Contains(errOut, store.ConfigID(&other)) {
		t.Errorf("two configs: exit %d, %q; want %d listing both ids", code, errOut, ExitUsage)
	}
}
