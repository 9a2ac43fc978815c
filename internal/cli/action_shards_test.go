package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/merge"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// shardConfig is a speedmatrix.yaml of four context rows, one decode cell each, on the
// in-process simulator (about a second a cell).
const shardConfig = "matrix: quick\ncells: [decode/2K/8, decode/4K/8, decode/8K/8, decode/16K/8]\nduration: 1s\nwarmup: 0\nquiet: true\nsim: {speedup: 40}\n"

// shardJob is one include entry of the decide job's matrix output.
type shardJob struct {
	Shard string `json:"shard"`
	Plan  string `json:"plan"`
}

// shardedRun runs the sharded split workflow on a pull request: decide with the shards input,
// one measure job per entry of its matrix output (no token, each its own artifact directory
// under shards/, as actions/download-artifact lays them out), then tamper (when not nil) with
// the shards' artifacts, then report with shard-artifacts naming them. It returns the decide
// job's outputs, the shards' artifact directories, and the report's outputs and error.
func shardedRun(t *testing.T, shards int, tamper func(dirs []string)) (e *actEnv, decide map[string]string, dirs []string, report map[string]string, err error) {
	t.Helper()
	se := newStoreEnv(t, 0)
	e = se.actEnv
	e.simTime = true // the shards and the base measured in the simulator's time, whatever the load
	e.writeConfig(shardConfig)
	// The measure jobs' runner holds the base's results of the same configuration, and so does
	// the store the report job reads its baseline from (never from an artifact).
	if err := os.MkdirAll(e.vars["INPUT_BASELINE-DIR"], 0o755); err != nil {
		t.Fatal(err)
	}
	basePath := filepath.Join(e.vars["INPUT_BASELINE-DIR"], prBase+".json")
	if _, stderr, err := runSimTime(t, nil, "run", "--config", e.vars["INPUT_CONFIG"], "-o", basePath); err != nil {
		t.Fatalf("measuring the base: %v\n%s", err, stderr)
	}
	e.writeConfig(shardConfig + "store: {dir: " + filepath.Join(e.dir, "store") + "}\n")
	bf, err := results.ReadFile(basePath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := se.st.Put(t.Context(), store.Entry{Commit: prBase, Kind: store.KindDefault}, bf); err != nil {
		t.Fatal(err)
	}
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	token := e.vars["INPUT_TOKEN"]
	e.vars["INPUT_MODE"], e.vars["INPUT_SHARDS"] = "decide", fmt.Sprint(shards)
	decide = mustRun(t, e)
	delete(e.vars, "INPUT_SHARDS")
	var m struct{ Include []shardJob }
	if err := json.Unmarshal([]byte(decide["matrix"]), &m); err != nil {
		t.Fatalf("decide output matrix %q: %v", decide["matrix"], err)
	}
	if decide["run"] != "true" || decide["shards"] != fmt.Sprint(shards) || len(m.Include) != shards {
		t.Fatalf("decide outputs %v: want run true and %d shards", decide, shards)
	}
	delete(e.vars, "INPUT_TOKEN")
	for i, j := range m.Include {
		if j.Shard != fmt.Sprintf("%d/%d", i+1, shards) || j.Plan != decide["plan"] {
			t.Errorf("matrix entry %d: %+v, want shard %d/%d of plan %s", i, j, i+1, shards, decide["plan"])
		}
		dir := filepath.Join(e.dir, "shards", fmt.Sprintf("speedmatrix-shard-%d", i+1))
		dirs = append(dirs, dir)
		e.vars["INPUT_MODE"], e.vars["INPUT_SHA"], e.vars["INPUT_CELLS"] = "measure", decide["sha"], decide["cells"]
		e.vars["INPUT_SHARD"], e.vars["INPUT_PLAN"], e.vars["INPUT_ARTIFACT-DIR"] = j.Shard, j.Plan, dir
		mustRun(t, e)
	}
	for _, k := range []string{"INPUT_SHARD", "INPUT_PLAN", "INPUT_CELLS"} {
		delete(e.vars, k)
	}
	if tamper != nil {
		tamper(dirs)
	}
	e.vars["INPUT_TOKEN"], e.vars["INPUT_MODE"] = token, "report"
	e.vars["INPUT_ARTIFACT-DIR"] = filepath.Join(e.dir, "artifact")
	e.vars["INPUT_SHARD-ARTIFACTS"] = filepath.Join(e.dir, "shards", "speedmatrix-shard-*")
	report, _, err = e.run(t.Context())
	return e, decide, dirs, report, err
}

// TestActionShards: decide with the shards input prints the job matrix (shard K/N and the plan
// id per job); each measure job measures its shard of the plan without a token; report merges
// the shards' artifacts and posts one comment and one completed check whose results are the
// merged shards', cell for cell, compared with the base.
func TestActionShards(t *testing.T) {
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n, " shards"), func(t *testing.T) {
			e, _, dirs, report, err := shardedRun(t, n, nil)
			if err != nil {
				t.Fatalf("report: %v", err)
			}
			var in []merge.Input
			for _, d := range dirs {
				f, err := results.ReadFile(filepath.Join(d, "results.json"))
				if err != nil {
					t.Fatal(err)
				}
				if f.Run.Shard == nil {
					t.Fatalf("%s holds no shard", d)
				}
				if fileExistsT(filepath.Join(d, "comparison.json")) {
					t.Errorf("a measure job compared its shard alone")
				}
				in = append(in, merge.Input{Name: d, File: f})
			}
			want, err := merge.Shards(in, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := results.ReadFile(report["results"])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Decode, got.Decode); diff != "" || len(got.Decode) != 4 {
				t.Errorf("the report's results are not the merged shards' (%d decode cells; -merged +report):\n%s", len(got.Decode), diff)
			}
			if got.Run.Shard != nil || got.Run.Partial {
				t.Errorf("report results: shard %v partial %v", got.Run.Shard, got.Run.Partial)
			}
			if report["comparison"] == "" || report["conclusion"] != "success" {
				t.Fatalf("report outputs %v", report)
			}
			cmpFile, err := results.ReadComparisonFile(report["comparison"])
			if err != nil {
				t.Fatal(err)
			}
			var cells []string
			for _, c := range cmpFile.Cells {
				cells = append(cells, c.Cell)
			}
			if len(cells) < 4 || !strings.Contains(strings.Join(cells, ","), "decode/16K/8") {
				t.Errorf("compared cells %v, want the four rows'", cells)
			}
			st := e.srv.State()
			c := oneCheck(t, st, prHead)
			if c.Status != "completed" || c.Conclusion != "success" {
				t.Errorf("check %s %s %q", c.Status, c.Conclusion, c.Title)
			}
			if b := oneComment(t, st); !strings.Contains(b, `"phase":"done"`) || !strings.Contains(b, "decode/16K/8") {
				t.Errorf("comment:\n%s", b)
			}
		})
	}
}

// TestActionShardsRefuseMismatch: a shard measured on other hardware (or not a shard of the
// plan) is not merged: the check fails and says why, the comment says so, nothing is compared.
func TestActionShardsRefuseMismatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dirs []string)
		says   string
	}{
		{"other GPU", func(t *testing.T, dirs []string) {
			editResults(t, dirs[1], func(f *results.File) { f.Hardware.GPU = "H100 SXM" })
		}, `hardware GPU is`},
		{"other commit", func(t *testing.T, dirs []string) {
			editMeta(t, dirs[0], prBase)
		}, "the shards' artifacts are for different commits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _, report, err := shardedRun(t, 2, func(dirs []string) { tc.tamper(t, dirs) })
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("report error %v, want one saying %q", err, tc.says)
			}
			if report["conclusion"] != "failure" || report["comparison"] != "" {
				t.Errorf("report outputs %v", report)
			}
			st := e.srv.State()
			c := oneCheck(t, st, prHead)
			if c.Status != "completed" || c.Conclusion != "failure" || !strings.Contains(c.Title, "shards") || !strings.Contains(c.Summary, tc.says) {
				t.Errorf("check %s %s %q:\n%s", c.Status, c.Conclusion, c.Title, c.Summary)
			}
			if b := oneComment(t, st); !strings.Contains(b, tc.says) {
				t.Errorf("comment:\n%s", b)
			}
		})
	}
}

// editResults rewrites dir's results.json with edit applied.
func editResults(t *testing.T, dir string, edit func(*results.File)) {
	t.Helper()
	p := filepath.Join(dir, "results.json")
	f, err := results.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	if err := results.WriteFile(p, f); err != nil {
		t.Fatal(err)
	}
}

// editMeta rewrites dir's meta.json with head_sha set to sha.
func editMeta(t *testing.T, dir, sha string) {
	t.Helper()
	p := filepath.Join(dir, "meta.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["head_sha"] = sha
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestActionShardsMissing: when a measure job left no results (it failed before writing its
// artifact), the report merges nothing and completes the check as cancelled, naming the shard.
func TestActionShardsMissing(t *testing.T) {
	e, _, _, report, err := shardedRun(t, 2, func(dirs []string) { os.RemoveAll(dirs[1]) })
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	if report["conclusion"] != "cancelled" || report["comparison"] != "" {
		t.Errorf("report outputs %v", report)
	}
	c := oneCheck(t, e.srv.State(), prHead)
	if c.Conclusion != "cancelled" || !strings.Contains(c.Summary, "shard 2/2 of plan") || !strings.Contains(c.Summary, "not given") {
		t.Errorf("check %s %q:\n%s", c.Conclusion, c.Title, c.Summary)
	}
}
