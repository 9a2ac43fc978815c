//go:build realrunner

package actrunner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// The fake's people and token: Codertocat may write to every scratch repository, octo-reader
// may only read.
const (
	owner      = "Codertocat"
	maintainer = "Codertocat"
	reader     = "octo-reader"
	token      = "ghs_actrunnerfaketoken0123456789"
	dataRef    = "heads/speedmatrix-data"
)

// harness is what every run of act shares: the tools, the fake GitHub process and its origin,
// the actions act maps, and the rows of the acceptance table.
type harness struct {
	t         *testing.T
	root      string // this repository
	scratch   string
	logs      string // the runs' event payloads and logs, kept after the test (git-ignored tmp/actrunner)
	bin       string // speedmatrix and ghfake, first on the runner's PATH
	act       string
	api       string // http://127.0.0.1:PORT, for the harness and the bot's API URL
	server    string // http://github.localhost:PORT: GITHUB_SERVER_URL (upload-artifact v4's host rule)
	gitRoot   string
	cache     string // act's action cache path (its tool_cache, the jobs' RUNNER_TEMP)
	artifacts string
	buildLog  string
	releases  string   // ghfake's -releases: the release binary of the action copy "release"
	source    string   // the action under test as its source (built by action.yml)
	release   string   // the same with release/SHA256SUMS and release/TAG naming a served binary
	actions   []string // --local-repository mappings
	which     map[string]string
	runID     int
	comment   int64 // the id of the last comment commentEvent seeded

	mu   sync.Mutex
	rows []row
}

// row is one run of act: a workflow under one scenario.
type row struct {
	workflow, scenario string
	exit               int
	wall               time.Duration
	jobs               []jobTime
	builds             map[string]int // RUNNER_TEMP → builds of the action's binary there
	verdict            string
	err                string
	binary             string // the action as source or as release
}

// jobTime is one job's wall time under act, from its first line of output to its last.
type jobTime struct {
	name         string
	first, last  time.Time
	result       string
	lastFailLine string
}

func TestWorkflows(t *testing.T) {
	h := newHarness(t)
	t.Run("setup-go-cache", h.checkSetupGoCache)
	for _, wf := range []struct {
		name, file string
		run        func(*testing.T, *harness, string)
	}{
		{"example-gpu", "example-gpu.yml", runExample},
		{"example-gpu-bisect", "example-gpu.yml", runBisect}, // bisect_test.go
		{"example-gpu-sharded", "example-gpu-sharded.yml", runSharded},
		{"selftest", "selftest.yml", runSelftest},
		{"release", "release.yml", runRelease}, // release_test.go
	} {
		t.Run(wf.name, func(t *testing.T) { wf.run(t, h, wf.file) })
	}
	h.printTable()
}

func newHarness(t *testing.T) *harness {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "action.yml")); err != nil {
		t.Fatalf("the repository root %s has no action.yml: run the test from its package directory", root)
	}
	act := os.Getenv("ACT")
	if act == "" {
		act, err = exec.LookPath("act")
		if err != nil {
			t.Fatal("act not found: install it with `go install github.com/nektos/act@v0.2.89` and set ACT to its path (or put it on PATH)")
		}
	}
	if out, err := exec.Command(act, "--version").CombinedOutput(); err != nil {
		t.Fatalf("%s --version: %v: %s", act, err, out)
	} else {
		t.Logf("runner: %s", strings.TrimSpace(string(out)))
	}
	scratch := t.TempDir()
	h := &harness{
		t: t, root: root, scratch: scratch, act: act,
		bin:       filepath.Join(scratch, "bin"),
		gitRoot:   filepath.Join(scratch, "git"),
		cache:     filepath.Join(scratch, "act-cache"),
		artifacts: filepath.Join(scratch, "artifacts"),
		buildLog:  filepath.Join(scratch, "builds.log"),
		releases:  filepath.Join(scratch, "releases"),
		which:     map[string]string{},
		runID:     7000,
		logs:      filepath.Join(root, "tmp", "actrunner"),
	}
	if err := os.RemoveAll(h.logs); err != nil {
		t.Fatal(err)
	}
	t.Logf("the runs' logs: %s", h.logs)
	for _, d := range []string{h.bin, h.gitRoot, h.cache, h.artifacts, h.releases} {
		mustMkdir(t, d)
	}
	h.gobuild(t)
	h.toolCache(t)
	h.mapActions(t)
	h.startFake(t)
	return h
}

// gobuild builds the simulator's binary (the engine the scratch repositories serve), ghfake and
// the stand-in gh (testdata/gh: GitHub's runners have the GitHub CLI; the host may not).
func (h *harness) gobuild(t *testing.T) {
	cmd := exec.Command("go", "build", "-o", h.bin+string(filepath.Separator), "./cmd/speedmatrix", "./ghbot/ghtest/ghfake", "./internal/e2e/actrunner/testdata/gh")
	cmd.Dir = h.root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// toolCache lays the machine's Go out in act's tool cache as setup-go expects it
// (go/VERSION/x64 with an x64.complete marker), under both the machine's version and go.mod's,
// behind a go that logs each build of ./cmd/speedmatrix with the job's RUNNER_TEMP (the
// acceptance: one build per runner per action commit); release/make.sh's builds (-o
// dist/speedmatrix_*) are a release's binaries, not the action's, and are not logged.
func (h *harness) toolCache(t *testing.T) {
	goroot := strings.TrimSpace(run(t, "", "go", "env", "GOROOT"))
	version := strings.TrimPrefix(strings.TrimSpace(run(t, "", "go", "env", "GOVERSION")), "go")
	versions := []string{version}
	if m := regexp.MustCompile(`(?m)^go (\S+)`).FindStringSubmatch(readFile(t, filepath.Join(h.root, "go.mod"))); m != nil && m[1] != version {
		versions = append(versions, m[1])
	}
	for _, v := range versions {
		x64 := filepath.Join(h.cache, "tool_cache", "go", v, "x64")
		mustMkdir(t, filepath.Join(x64, "bin"))
		wrapper := fmt.Sprintf(`#!/bin/sh
if [ "$1" = build ]; then
  release=false
  for a in "$@"; do case "$a" in dist/speedmatrix_*) release=true;; esac; done
  $release || for a in "$@"; do case "$a" in *cmd/speedmatrix) echo "${RUNNER_TEMP:-none}" >> %q;; esac; done
fi
exec %q "$@"
`, h.buildLog, filepath.Join(goroot, "bin", "go"))
		writeFile(t, filepath.Join(x64, "bin", "go"), wrapper, 0o755)
		if err := os.Symlink(filepath.Join(goroot, "bin", "gofmt"), filepath.Join(x64, "bin", "gofmt")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, x64+".complete", "", 0o644)
	}
}

// standIns are GitHub's actions the workflows use: each use (at whatever ref it pins) is mapped
// to the real action when tmp/actions/NAME of this repository holds it, else to the stand-in of
// testdata/actions/NAME.
var standIns = []string{"checkout", "setup-go", "upload-artifact", "download-artifact"}

// actionUses returns the uses: values of GitHub's actions in action.yml and the workflows.
func actionUses(t *testing.T, root string) map[string]bool {
	out := map[string]bool{}
	re := regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(actions/[A-Za-z0-9._-]+@[A-Za-z0-9._-]+)`)
	files, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	for _, f := range append(files, filepath.Join(root, "action.yml")) {
		for _, m := range re.FindAllStringSubmatch(readFile(t, f), -1) {
			out[m[1]] = true
		}
	}
	return out
}

func (h *harness) mapActions(t *testing.T) {
	dirs := map[string]string{}
	for _, name := range standIns {
		dir := filepath.Join(h.root, "tmp", "actions", name)
		h.which[name] = "real (" + dir + ")"
		if _, err := os.Stat(filepath.Join(dir, "action.yml")); err != nil {
			dir, _ = filepath.Abs(filepath.Join("testdata", "actions", name))
			h.which[name] = "stand-in (testdata/actions/" + name + ")"
		}
		dirs["actions/"+name] = dir
		t.Logf("actions/%s: %s", name, h.which[name])
	}
	var uses []string
	for u := range actionUses(t, h.root) {
		uses = append(uses, u)
	}
	sort.Strings(uses)
	for _, u := range uses {
		name, _, _ := strings.Cut(u, "@")
		if dir, ok := dirs[name]; ok {
			h.actions = append(h.actions, u+"="+dir)
		}
	}
	// The action under test: this repository's working tree as it is, copied (without what git
	// ignores) so that the runner sees exactly the files a tag of it would hold; and the same as
	// a release, whose release/SHA256SUMS names the binary ghfake serves at the release's
	// download URL (binary.sh fetches and checks it; no Go needed, as on a GPU runner).
	h.source = filepath.Join(h.scratch, "action")
	copyTree(t, h.root, h.source)
	h.release = filepath.Join(h.scratch, "action-release")
	copyTree(t, h.root, h.release)
	const tag, name = "v1.0.0-actrunner", "speedmatrix_linux_amd64"
	dst := filepath.Join(h.releases, "speedmatrix", "speedmatrix", tag)
	mustMkdir(t, dst)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", filepath.Join(dst, name), "./cmd/speedmatrix")
	cmd.Dir, cmd.Env = h.root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the release binary: %v\n%s", err, out)
	}
	sum := strings.Fields(run(t, dst, "sha256sum", name))[0]
	// binary.sh uses a release binary only for the source its sums name (# source HASH).
	source := strings.TrimSpace(run(t, h.release, "bash", "release/sourcehash.sh"))
	writeFile(t, filepath.Join(h.release, "release", "TAG"), tag+"\n", 0o644)
	writeFile(t, filepath.Join(h.release, "release", "SHA256SUMS"), "# source "+source+"\n"+sum+"  "+name+"\n", 0o644)
}

// copyTree copies the files git tracks or would track (not what it ignores) from root to dst.
func copyTree(t *testing.T, root, dst string) {
	out := run(t, root, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for _, p := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, p))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(filepath.Join(root, p))
		mustMkdir(t, filepath.Dir(filepath.Join(dst, p)))
		writeFile(t, filepath.Join(dst, p), string(b), fi.Mode().Perm())
	}
}

// startFake starts ghfake, the fake GitHub and git origin, and stops it when the test ends.
func (h *harness) startFake(t *testing.T) {
	addrFile := filepath.Join(h.scratch, "ghfake.addr")
	cmd := exec.Command(filepath.Join(h.bin, "ghfake"), "-listen", "127.0.0.1:0", "-addr-file", addrFile, "-git", h.gitRoot, "-releases", h.releases)
	logf, err := os.Create(filepath.Join(h.scratch, "ghfake.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ghfake: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		logf.Close()
	})
	var addr string
	for i := 0; i < 200; i++ {
		if b, err := os.ReadFile(addrFile); err == nil {
			addr = strings.TrimSpace(string(b))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if addr == "" {
		t.Fatalf("ghfake wrote no address in 10 s: see %s", logf.Name())
	}
	_, port, _ := net.SplitHostPort(addr)
	h.api = "http://" + addr
	h.server = "http://github.localhost:" + port
	h.setup(t, ghtest.Setup{Tokens: map[string]string{token: ghtest.ActionsLogin}})
}

func (h *harness) setup(t *testing.T, s ghtest.Setup) []int64 {
	t.Helper()
	b, _ := json.Marshal(s)
	resp, err := http.Post(h.api+"/_setup", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("ghfake setup: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("ghfake setup: %s: %s", resp.Status, body)
	}
	var out struct {
		CommentIDs []int64 `json:"comment_ids"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	return out.CommentIDs
}

func (h *harness) state(t *testing.T) ghtest.Dump {
	t.Helper()
	resp, err := http.Get(h.api + "/_state?ref=" + dataRef)
	if err != nil {
		t.Fatalf("ghfake state: %v", err)
	}
	defer resp.Body.Close()
	var d ghtest.Dump
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatalf("ghfake state: %v", err)
	}
	return d
}

// checkSetupGoCache: where the real setup-go did not run, every use of it in action.yml and the
// shipped workflows must say cache: false (its cache of a path outside the workspace only warns
// "Restore cache failed", and no Go cache may cross jobs on a GPU runner).
func (h *harness) checkSetupGoCache(t *testing.T) {
	files := []string{"action.yml", ".github/workflows/example-gpu.yml", ".github/workflows/example-gpu-sharded.yml", ".github/workflows/selftest.yml", ".github/workflows/release.yml"}
	var bad []string
	for _, f := range files {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(h.root, f))), &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var steps []any
		if r, ok := doc["runs"].(map[string]any); ok {
			steps, _ = r["steps"].([]any)
		}
		jobs, _ := doc["jobs"].(map[string]any)
		for _, j := range jobs {
			if jm, ok := j.(map[string]any); ok {
				s, _ := jm["steps"].([]any)
				steps = append(steps, s...)
			}
		}
		for i, s := range steps {
			sm, _ := s.(map[string]any)
			uses, _ := sm["uses"].(string)
			if !strings.HasPrefix(uses, "actions/setup-go@") {
				continue
			}
			with, _ := sm["with"].(map[string]any)
			if c := fmt.Sprint(with["cache"]); c != "false" {
				bad = append(bad, fmt.Sprintf("%s: step %d (%s) has cache: %s, want false", f, i+1, uses, c))
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("setup-go's cache must be off (cache: false):\n%s", strings.Join(bad, "\n"))
	}
}

// repo is a scratch repository on the origin, with its commits by role.
type repo struct {
	full, name string
	work       string // the runner's working directory (a clone)
	sha        map[string]string
}

// engineConfig is the scratch engine's speedmatrix.yaml: the built-in simulator served as the
// engine (build none), the quick matrix (2 context rows, 8 cells) in one-second windows at 10×
// the profile's speed; slowdown and fault change the served engine.
func engineConfig(slowdown, fault string) string {
	extra := ""
	if slowdown != "" {
		extra += fmt.Sprintf(", --slowdown, %q", slowdown)
	}
	if fault != "" {
		extra += fmt.Sprintf(", --fault, %q", fault)
	}
	return fmt.Sprintf(`matrix: quick
duration: 1s
warmup: 0
quiet: true
engine:
  name: speedmatrix-sim
  build: none
  # In the sandbox (the default): the speedmatrix on the runner's PATH is shown read-only,
  # nothing else of its directory (docs/security.md).
  serve:
    command: [speedmatrix, sim, --profile, glm-5.3-flash-nvfp4-h200x2, --sim-speedup, "10", --seed, "7"%s,
              --listen, "127.0.0.1:${PORT}"]
    port: 0
    ready_timeout: 60s
`, extra)
}

// treeServe is the scratch engine's launch script (serve.sh): the built-in simulator, as
// engineConfig serves it, with its slowdown and faults read from files of the tree it runs in
// (slowdown.txt, fault.txt), as a real engine's speed is its tree's. A paired run (paired.mode
// auto, the default: the first pull requests of a repository) serves the merge-base and the
// head each from its own checkout, so each side serves its own tree's engine; a speedmatrix.yaml
// setting would be the head's on both sides.
const treeServe = `#!/bin/sh
exec speedmatrix sim --profile glm-5.3-flash-nvfp4-h200x2 --sim-speedup 10 --seed 7 \
  --slowdown "$(cat slowdown.txt 2>/dev/null)" --fault "$(cat fault.txt 2>/dev/null)" --listen "127.0.0.1:$1"
`

// treeEngineConfig is engineConfig served by serve.sh of the tree (treeServe).
func treeEngineConfig() string {
	return `matrix: quick
duration: 1s
warmup: 0
quiet: true
engine:
  name: speedmatrix-sim
  build: none
  # In the sandbox (the default): the workspace's checkout, whose serve.sh it runs, is shown
  # read-only without the artifact directory in it, and the speedmatrix on PATH (docs/security.md).
  serve:
    command: [sh, serve.sh, "${PORT}"]
    port: 0
    ready_timeout: 60s
`
}

// gitEnv makes commits reproducible in time order.
func gitEnv(n int) []string {
	d := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute).Format(time.RFC3339)
	return append(os.Environ(), "GIT_AUTHOR_NAME=Codertocat", "GIT_AUTHOR_EMAIL=c@example.com",
		"GIT_COMMITTER_NAME=Codertocat", "GIT_COMMITTER_EMAIL=c@example.com",
		"GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d, "GIT_CONFIG_GLOBAL=/dev/null")
}

// commitStep is one commit of a scratch repository: files to write (nil content removes), on
// top of parent's role ("" for the root).
type commitStep struct {
	role, parent, branch string
	files                map[string]string
}

// makeRepo builds the scratch repository name from steps, pushes it to the origin, registers
// its commit graph, repository and permissions with the fake, and clones the runner's working
// directory.
func (h *harness) makeRepo(t *testing.T, name string, base string, steps []commitStep) *repo {
	r := &repo{full: owner + "/" + name, name: name, sha: map[string]string{}}
	src := filepath.Join(h.scratch, "src", name)
	if base != "" {
		copyTree(t, base, src)
	}
	mustMkdir(t, src)
	git := func(n int, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = src, gitEnv(n)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(0, "init", "-q", "-b", "main")
	for i, s := range steps {
		if s.parent != "" {
			git(i, "checkout", "-q", "--detach", r.sha[s.parent])
		}
		for p, c := range s.files {
			mustMkdir(t, filepath.Dir(filepath.Join(src, p)))
			writeFile(t, filepath.Join(src, p), c, 0o644)
		}
		git(i, "add", "-A")
		git(i+1, "commit", "-q", "--allow-empty", "-m", s.role)
		r.sha[s.role] = git(i, "rev-parse", "HEAD")
		git(i, "checkout", "-q", "--detach") // so that branch -f may move main too
		if s.branch != "" {
			git(i, "branch", "-f", s.branch, "HEAD")
		}
	}
	bare := filepath.Join(h.gitRoot, owner, name+".git")
	run(t, "", "git", "clone", "-q", "--bare", src, bare)
	run(t, bare, "git", "config", "uploadpack.allowAnySHA1InWant", "true")
	// The fake's graph, parents first, with GitHub's repository and people.
	s := ghtest.Setup{
		Repos:       []ghtest.Repo{{Owner: owner, Name: name, DefaultBranch: "main", PushedAt: time.Now().Add(-time.Hour).Truncate(time.Second)}},
		Permissions: []ghtest.SetupPermission{{Repo: r.full, User: maintainer, Level: "write"}, {Repo: r.full, User: reader, Level: "read"}},
		Refs:        map[string]ghtest.SetupRef{},
	}
	log := git(0, "log", "--all", "--reverse", "--topo-order", "--format=%H %cI %P")
	for _, line := range strings.Split(log, "\n") {
		f := strings.Fields(line)
		d, _ := time.Parse(time.RFC3339, f[1])
		s.Commits = append(s.Commits, ghtest.SetupCommit{Repo: r.full, GitCommit: ghtest.GitCommit{SHA: f[0], Date: d, Parents: f[2:], Message: "commit " + f[0][:7]}})
	}
	for _, st := range steps {
		if st.branch != "" {
			s.Refs[r.full+" heads/"+st.branch] = ghtest.SetupRef{SHA: r.sha[st.role]}
		}
	}
	h.setup(t, s)
	r.work = filepath.Join(h.scratch, "work", name)
	run(t, "", "git", "clone", "-q", src, r.work)
	run(t, r.work, "git", "remote", "set-url", "origin", h.server+"/"+r.full)
	return r
}

// engineRepo is the scratch engine repository of a workflow: the root on main, the push's
// commit B, and four pull-request heads on B: H (unchanged engine), S (decodes four times as
// slowly from 32K), D (the engine's server crashes after 5 s) and X (unchanged, but its build
// and server leave a detached daemon: daemon_test.go). The engine's speed and faults
// are files of its tree, read by serve.sh (treeServe).
func (h *harness) engineRepo(t *testing.T, name, workflow string) *repo {
	wf := readFile(t, filepath.Join(h.root, ".github", "workflows", workflow))
	return h.makeRepo(t, name, "", []commitStep{
		{role: "root", files: map[string]string{"speedmatrix.yaml": treeEngineConfig(), "serve.sh": treeServe, ".github/workflows/" + workflow: wf, "README.md": "engine\n"}},
		{role: "B", branch: "main", files: map[string]string{"README.md": "engine, v2\n"}},
		{role: "H", parent: "B", branch: "feature", files: map[string]string{"kernel.txt": "a faster kernel\n"}},
		{role: "S", parent: "B", branch: "slow", files: map[string]string{"slowdown.txt": "decode=4@ctx>=32K"}},
		{role: "D", parent: "B", branch: "dies", files: map[string]string{"fault.txt": "crash=5s"}},
		{role: "X", parent: "B", branch: "daemon", files: daemonFiles(daemonMarker())}, // daemon_test.go
	})
}

// triggers returns the workflow's on: keys.
func triggers(t *testing.T, file string) map[string]bool {
	var doc struct {
		On yaml.Node `yaml:"on"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, file)), &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]bool{}
	switch doc.On.Kind {
	case yaml.ScalarNode:
		out[doc.On.Value] = true
	case yaml.SequenceNode:
		for _, n := range doc.On.Content {
			out[n.Value] = true
		}
	case yaml.MappingNode:
		for i := 0; i < len(doc.On.Content); i += 2 {
			out[doc.On.Content[i].Value] = true
		}
	}
	return out
}

// prEvent is the event a pull request of the workflow delivers: pull_request_target when the
// workflow listens to it, else pull_request.
func prEvent(t *testing.T, file string) string {
	on := triggers(t, file)
	if on["pull_request_target"] {
		return "pull_request_target"
	}
	if on["pull_request"] {
		return "pull_request"
	}
	t.Fatalf("%s listens to no pull-request event", file)
	return ""
}

// event is one delivery: its name, payload and the commit the runner's GITHUB_SHA names.
type event struct {
	name    string
	body    []byte
	sha     string
	release bool // the action as a release (its binary downloaded), not as source to build
}

// payload derives testdata/github-events/file for r with the fields set.
func (h *harness) payload(t *testing.T, r *repo, file string, set map[string]any) []byte {
	b := []byte(readFile(t, filepath.Join(h.root, "testdata", "github-events", file)))
	for k, v := range map[string]any{
		"repository.full_name": r.full, "repository.name": r.name, "repository.owner.login": owner,
		"repository.default_branch": "main", "repository.private": false,
		"repository.html_url": h.server + "/" + r.full, "repository.clone_url": h.server + "/" + r.full + ".git",
		"sender.login": maintainer,
	} {
		if _, ok := set[k]; !ok {
			set[k] = v
		}
	}
	delete(set, "-installation")
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "installation") // the workflow's GITHUB_TOKEN, not an App installation
	b, _ = json.Marshal(m)
	return ghtest.DerivePayload(t, b, set)
}

// pushEvent is the push of r's role to main (from its parent).
func (h *harness) pushEvent(t *testing.T, r *repo, role, before string) event {
	return event{"push", h.payload(t, r, "push/with-new-branch.payload.json", map[string]any{
		"ref": "refs/heads/main", "before": r.sha[before], "after": r.sha[role], "created": false, "deleted": false, "forced": false,
		"head_commit.id": r.sha[role], "commits": []any{}, "base_ref": nil,
	}), r.sha[role], false}
}

// prEventFor is pull request number opened with head role on main at base.
func (h *harness) prEventFor(t *testing.T, r *repo, name string, number int, role, branch, base string) event {
	h.setup(t, ghtest.Setup{Pulls: []ghtest.Pull{{Repo: r.full, Number: number, Author: maintainer, HeadSHA: r.sha[role], HeadRef: branch, BaseSHA: r.sha[base], BaseRef: "main"}}})
	body := h.payload(t, r, "pull_request/opened.payload.json", map[string]any{
		"number": number, "pull_request.number": number,
		"pull_request.head.sha": r.sha[role], "pull_request.head.ref": branch,
		"pull_request.head.repo.full_name": r.full, "pull_request.head.repo.name": r.name, "pull_request.head.repo.owner.login": owner,
		"pull_request.base.sha": r.sha[base], "pull_request.base.ref": "main",
		"pull_request.base.repo.full_name": r.full, "pull_request.base.repo.name": r.name, "pull_request.base.repo.owner.login": owner,
		"pull_request.user.login": maintainer, "pull_request.author_association": "OWNER",
	})
	sha := r.sha[role] // pull_request: the merge commit; ours is the head (act fetches nothing)
	if name == "pull_request_target" {
		sha = r.sha[base]
	}
	return event{name, body, sha, false}
}

// commentEvent is user's comment body on pull request number, seeded on the fake first.
func (h *harness) commentEvent(t *testing.T, r *repo, number int, user, body, mainRole string) event {
	created := time.Now().Add(2 * time.Second).Truncate(time.Second)
	ids := h.setup(t, ghtest.Setup{Comments: []ghtest.Comment{{Repo: r.full, Issue: number, User: user, Body: body, CreatedAt: created, UpdatedAt: created}}})
	h.comment = ids[0]
	assoc := "NONE"
	if user == maintainer {
		assoc = "OWNER"
	}
	return event{"issue_comment", h.payload(t, r, "issue_comment/created.on-pull-request.DERIVED.json", map[string]any{
		"comment.body": body, "comment.id": ids[0], "comment.user.login": user, "sender.login": user,
		"comment.created_at": created.Format(time.RFC3339), "comment.updated_at": created.Format(time.RFC3339),
		"comment.author_association": assoc, "issue.number": number, "issue.state": "open",
		"issue.pull_request.url": h.api + "/api/v3/repos/" + r.full + "/pulls/" + strconv.Itoa(number),
	}), r.sha[mainRole], false}
}

var jobLine = regexp.MustCompile(`^\[([^\]]+)\] (.*)$`)

// runAct runs act for one event of workflow file in r's working directory and returns its row.
func (h *harness) runAct(t *testing.T, r *repo, file, scenario string, ev event) row {
	h.runID++
	rowv := row{workflow: file, scenario: scenario, builds: map[string]int{}}
	dir := filepath.Join(h.logs, fmt.Sprintf("%d-%s-%s", h.runID, r.name, scenario))
	mustMkdir(t, dir)
	evFile := filepath.Join(dir, "event.json")
	writeFile(t, evFile, string(ev.body), 0o644)
	wf := filepath.Join(dir, file) // outside the workspace: the jobs' checkouts replace its files
	writeFile(t, wf, readFile(t, filepath.Join(h.root, ".github", "workflows", file)), 0o644)
	os.Remove(h.buildLog)
	args := []string{ev.name, "-W", wf, "-C", r.work, "-e", evFile,
		"-P", "ubuntu-latest=-self-hosted", "-P", "self-hosted=-self-hosted", "-P", "linux=-self-hosted",
		"-P", "h200=-self-hosted", "-P", "gpu=-self-hosted",
		"--action-cache-path", h.cache, "--no-skip-checkout",
		"--artifact-server-path", filepath.Join(h.artifacts, "server"), "--artifact-server-addr", "127.0.0.1",
		"--artifact-server-port", strconv.Itoa(freePort(t)),
		"-s", "GITHUB_TOKEN=" + token,
		"--env", "GITHUB_SERVER_URL=" + h.server,
		"--env", "GITHUB_API_URL=" + h.api + "/api/v3",
		"--env", "GITHUB_REPOSITORY=" + r.full,
		"--env", "GITHUB_REPOSITORY_OWNER=" + owner,
		// act sets no GITHUB_WORKFLOW_REF; GitHub's names the file at the run's ref (a
		// bisection's next round is dispatched to it).
		"--env", "GITHUB_WORKFLOW_REF=" + r.full + "/.github/workflows/" + file + "@refs/heads/main",
		"--env", "GITHUB_RUN_ID=" + strconv.Itoa(h.runID),
		"--env", "GITHUB_RUN_NUMBER=" + strconv.Itoa(h.runID),
		"--env", "SHA_REF=" + ev.sha,
		"--env", "ACT_ARTIFACT_DIR=" + h.artifacts,
		"--env", "BUILD_LOG=" + h.buildLog,
		// act runs every scenario on this one host with one tool cache: the scenarios stand for
		// separate (ephemeral) runners, so a push after a pull request's measurement is not refused
		// by the untrusted-code marker (engine/trust.go).
		"--env", "SPEEDMATRIX_EPHEMERAL_RUNNER=true",
	}
	for _, m := range h.actions {
		args = append(args, "--local-repository", m)
	}
	action := h.source
	rowv.binary = "source"
	if ev.release {
		action, rowv.binary = h.release, "release"
	}
	// The examples pin the release (release/TAG, v1.0.0); the moving major tag is mapped too.
	args = append(args, "--local-repository", "speedmatrix/speedmatrix@v1="+action)
	if tag, err := os.ReadFile(filepath.Join(h.root, "release", "TAG")); err == nil && strings.TrimSpace(string(tag)) != "" {
		args = append(args, "--local-repository", "speedmatrix/speedmatrix@"+strings.TrimSpace(string(tag))+"="+action)
	}
	cmd := exec.Command(h.act, args...)
	cmd.Dir = r.work
	home := filepath.Join(h.scratch, "home")
	mustMkdir(t, home)
	gocache := strings.TrimSpace(run(t, "", "go", "env", "GOCACHE"))
	gomodcache := strings.TrimSpace(run(t, "", "go", "env", "GOMODCACHE"))
	cmd.Env = append(filteredEnv(), "PATH="+h.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "GOCACHE="+gocache, "GOMODCACHE="+gomodcache,
		"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GIT_CONFIG_GLOBAL=/dev/null", "CI=")
	logPath := filepath.Join(dir, "act.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var named struct {
		Name string `yaml:"name"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, wf)), &named); err != nil {
		t.Fatal(err)
	}
	workflowName := named.Name
	jobs := map[string]*jobTime{}
	var order []string
	var full bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			now := time.Now()
			line := sc.Text()
			fmt.Fprintf(logf, "%s %s\n", now.Format("15:04:05.000"), line)
			full.WriteString(line + "\n")
			m := jobLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			wfName, name, ok := strings.Cut(strings.TrimSpace(m[1]), "/")
			if !ok || wfName != workflowName {
				continue // a line of a step's output that starts with [
			}
			j := jobs[name]
			if j == nil {
				j = &jobTime{name: name, first: now}
				jobs[name] = j
				order = append(order, name)
			}
			j.last = now
			switch {
			case strings.Contains(m[2], "🏁  Job succeeded"):
				j.result = "success"
			case strings.Contains(m[2], "🏁  Job failed"):
				j.result = "failure"
			case strings.Contains(m[2], "❌  Failure") || strings.Contains(m[2], "::error::"):
				j.lastFailLine = m[2]
			}
		}
	}()
	start := time.Now()
	err = cmd.Start()
	if err == nil {
		err = cmd.Wait()
	}
	pw.Close()
	<-done
	rowv.wall = time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok {
		rowv.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("act: %v", err)
	}
	for _, n := range order {
		rowv.jobs = append(rowv.jobs, *jobs[n])
	}
	if b, err := os.ReadFile(h.buildLog); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			rowv.builds[l]++
		}
	}
	t.Logf("act %s %s: exit %d in %s (log %s)", file, scenario, rowv.exit, rowv.wall.Round(time.Second), logPath)
	for _, j := range rowv.jobs {
		t.Logf("  job %-50s %-8s %6.1fs %s", j.name, j.result, j.last.Sub(j.first).Seconds(), j.lastFailLine)
	}
	// What holds for every run: the token never in the log, no job building the binary twice,
	// no warning of setup-go's cache where the real one ran.
	if strings.Contains(full.String(), token) {
		t.Errorf("the token appears in the runner's log %s", logPath)
	}
	for tmp, n := range rowv.builds {
		if n > 1 {
			t.Errorf("the action's binary was built %d times in one job (RUNNER_TEMP %s): want at most once per runner and action commit", n, tmp)
		}
	}
	if strings.HasPrefix(h.which["setup-go"], "real") && strings.Contains(full.String(), "Restore cache failed") {
		t.Errorf("setup-go warned \"Restore cache failed\" (log %s)", logPath)
	}
	return rowv
}

// record adds a row to the table, with the verdict the assertions saw (or what failed).
func (h *harness) record(t *testing.T, rw row, verdict string) {
	rw.verdict = verdict
	if t.Failed() {
		rw.err, rw.verdict = "FAIL", "want "+verdict
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rows = append(h.rows, rw)
}

// printTable prints the acceptance: workflow × scenario, with each run's and job's wall time.
func (h *harness) printTable() {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "\nreal-runner acceptance (%s; actions: ", strings.TrimSpace(h.act))
	var names []string
	for n := range h.which {
		names = append(names, n+" "+h.which[n])
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "%s)\n", strings.Join(names, "; "))
	fmt.Fprintf(&b, "%-26s %-16s %-6s %-4s %7s %-8s %-6s  %s\n", "workflow", "scenario", "result", "exit", "wall", "action", "builds", "jobs (wall s)")
	for _, r := range h.rows {
		res := "ok"
		if r.err != "" {
			res = r.err
		}
		var js []string
		for _, j := range r.jobs {
			js = append(js, fmt.Sprintf("%s %s %.0fs", j.name, j.result, j.last.Sub(j.first).Seconds()))
		}
		builds := 0
		for _, n := range r.builds {
			builds += n
		}
		fmt.Fprintf(&b, "%-26s %-16s %-6s %-4d %6.0fs %-8s %-6d  %s: %s\n", r.workflow, r.scenario, res, r.exit, r.wall.Seconds(), r.binary, builds, r.verdict, strings.Join(js, ", "))
	}
	fmt.Print(b.String())
}

// checksOn summarizes the check runs on sha: name, status and conclusion.
type checkSum struct{ Name, Status, Conclusion string }

func checksOn(d ghtest.Dump, r *repo, sha string) []checkSum {
	var out []checkSum
	for _, c := range d.State.ChecksOn(r.full, sha) {
		out = append(out, checkSum{c.Name, c.Status, c.Conclusion})
	}
	return out
}

// botComments returns the bot's comments on issue n: the marked comment (marked) or its replies.
func botComments(d ghtest.Dump, r *repo, n int, marked bool) []ghtest.Comment {
	var out []ghtest.Comment
	for _, c := range d.State.CommentsOn(r.full, n) {
		if c.User == ghtest.ActionsLogin && strings.Contains(c.Body, "<!-- speedmatrix:comment") == marked {
			out = append(out, c)
		}
	}
	return out
}

// noneInProgress fails t for any check run of r not completed.
func noneInProgress(t *testing.T, d ghtest.Dump, r *repo) {
	t.Helper()
	for _, c := range d.State.CheckRuns {
		if c.Repo == r.full && c.Status != "completed" {
			t.Errorf("check run %d %q on %s is %s: a run must never leave a check unresolved", c.ID, c.Name, c.HeadSHA[:7], c.Status)
		}
	}
}

// --- helpers ---

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// filteredEnv is the test's environment without what would make act or the bot think they run
// in the CI that runs this test (GITHUB_*, RUNNER_*, ACTIONS_*).
func filteredEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "ACTIONS_") || strings.HasPrefix(k, "INPUT_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func mustMkdir(t *testing.T, d string) {
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, s string, mode os.FileMode) {
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
}

// refusedByReaction fails t unless the bot answered comment id with a 👎 reaction alone (a
// workflow whose job runs for any commenter, as the self-test's does, and refuses a reader).
func refusedByReaction(t *testing.T, d ghtest.Dump, r *repo, issue int, id int64) {
	t.Helper()
	var got []string
	for _, x := range d.State.Reactions {
		if x.Repo == r.full && x.CommentID == id && x.User == ghtest.ActionsLogin {
			got = append(got, x.Content)
		}
	}
	if strings.Join(got, ",") != "-1" {
		t.Errorf("the bot's reactions to the refused /bench: %v, want -1 alone", got)
	}
	if rs := botComments(d, r, issue, false); len(rs) != 0 {
		t.Errorf("the bot replied to a refused /bench: %q", rs[0].Body)
	}
}

// ignoredComment fails t if the bot reacted to or answered a reader's comment id: the decide
// job's if: starts no job for it.
func ignoredComment(t *testing.T, d ghtest.Dump, r *repo, issue int, id int64) {
	t.Helper()
	var got []string
	for _, x := range d.State.Reactions {
		if x.Repo == r.full && x.CommentID == id && x.User == ghtest.ActionsLogin {
			got = append(got, x.Content)
		}
	}
	// A reader's comment starts no job: the decide job's if: admits OWNER, MEMBER and
	// COLLABORATOR only (issue 34), so nothing holding a write token runs, and nothing reacts.
	if len(got) != 0 {
		t.Errorf("the bot reacted to a reader's /bench: %v, want nothing (no job runs for it)", got)
	}
	if rs := botComments(d, r, issue, false); len(rs) != 0 {
		t.Errorf("the bot replied to a refused /bench: %q", rs[0].Body)
	}
}
