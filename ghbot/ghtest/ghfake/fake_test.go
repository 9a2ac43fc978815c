package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestFakeServesGitByCommitID: a workflow's checkout fetches the pinned commit by its id, which
// is on no branch tip; git's smart HTTP refuses that unless uploadpack.allowAnySHA1InWant.
func TestFakeServesGitByCommitID(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	src := filepath.Join(root, "src")
	os.MkdirAll(src, 0o755)
	git(t, src, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("one\n"), 0o644)
	git(t, src, "add", "a.txt")
	git(t, src, "commit", "-q", "-m", "one")
	pinned := git(t, src, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("two\n"), 0o644)
	git(t, src, "commit", "-q", "-am", "two") // the pinned commit is no longer a tip
	gitRoot := filepath.Join(root, "git")
	git(t, root, "clone", "-q", "--bare", src, filepath.Join(gitRoot, "o", "r.git"))

	srv := httptest.NewServer(newFake(gitRoot, ""))
	defer srv.Close()
	dst := filepath.Join(root, "dst")
	os.MkdirAll(dst, 0o755)
	git(t, dst, "init", "-q")
	// Protocol v0, where upload-pack checks wants strictly (v2 serves any reachable commit).
	git(t, dst, "-c", "protocol.version=0", "fetch", "-q", "--depth=1", srv.URL+"/o/r", pinned) // no .git, as GitHub allows
	if got := git(t, dst, "rev-parse", "FETCH_HEAD"); got != pinned {
		t.Errorf("fetched %s, want the pinned %s", got, pinned)
	}
}

// TestFakeSetupAndState: what POST /_setup adds, the API serves under /api/v3 and GET /_state
// reports, with the files of the asked ref.
func TestFakeSetupAndState(t *testing.T) {
	f := newFake("", "")
	srv := httptest.NewServer(f)
	defer srv.Close()
	setup := `{"repos":[{"Owner":"o","Name":"r","DefaultBranch":"main"}],"tokens":{"tok":"github-actions[bot]"},
	  "permissions":[{"repo":"o/r","user":"reader","level":"read"}],
	  "commits":[{"repo":"o/r","SHA":"1111111111111111111111111111111111111111"},
	             {"repo":"o/r","SHA":"2222222222222222222222222222222222222222","Parents":["1111111111111111111111111111111111111111"]}],
	  "refs":{"o/r heads/main":{"sha":"2222222222222222222222222222222222222222"}},
	  "pulls":[{"Repo":"o/r","Number":1,"HeadSHA":"2222222222222222222222222222222222222222","BaseSHA":"1111111111111111111111111111111111111111","BaseRef":"main"}],
	  "comments":[{"Repo":"o/r","Issue":1,"User":"reader","Body":"/bench"}]}`
	resp, err := http.Post(srv.URL+"/_setup", "application/json", strings.NewReader(setup))
	if err != nil {
		t.Fatal(err)
	}
	var ids struct {
		CommentIDs []int64 `json:"comment_ids"`
	}
	json.NewDecoder(resp.Body).Decode(&ids)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(ids.CommentIDs) != 1 {
		t.Fatalf("setup: %s, ids %v", resp.Status, ids.CommentIDs)
	}

	// The bot's client, as a workflow step runs it: GITHUB_API_URL is the fake's /api/v3.
	c, err := github.NewClient(nil).WithAuthToken("tok").WithEnterpriseURLs(srv.URL, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	pr, _, err := c.PullRequests.Get(ctx, "o", "r", 1)
	if err != nil {
		t.Fatalf("get the pull request: %v", err)
	}
	if got := pr.GetHead().GetSHA(); got != "2222222222222222222222222222222222222222" {
		t.Errorf("head %s", got)
	}
	cm, _, err := c.Repositories.ListCommits(ctx, "o", "r", &github.CommitsListOptions{SHA: "main"})
	if err != nil {
		t.Fatalf("list commits: %v", err)
	}
	if len(cm) != 2 {
		t.Errorf("%d commits listed along main, want 2", len(cm))
	}
	if _, _, err := c.Checks.CreateCheckRun(ctx, "o", "r", github.CreateCheckRunOptions{Name: "speedmatrix", HeadSHA: "2222222222222222222222222222222222222222", Status: github.String("in_progress")}); err != nil {
		t.Fatalf("create a check run: %v", err)
	}

	resp, err = http.Get(srv.URL + "/_state?ref=heads/main")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d ghtest.Dump
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	type sum struct{ Name, Status, SHA string }
	var got []sum
	for _, cr := range d.State.CheckRuns {
		got = append(got, sum{cr.Name, cr.Status, cr.HeadSHA})
	}
	if diff := cmp.Diff([]sum{{"speedmatrix", "in_progress", "2222222222222222222222222222222222222222"}}, got); diff != "" {
		t.Errorf("check runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"o/r": "2222222222222222222222222222222222222222"}, d.Refs); diff != "" {
		t.Errorf("refs (-want +got):\n%s", diff)
	}
	if cs := d.State.CommentsOn("o/r", 1); len(cs) != 1 || cs[0].User != "reader" || cs[0].ID != ids.CommentIDs[0] {
		t.Errorf("comments: %+v", cs)
	}
	_ = ghtest.ActionsLogin
}

// TestSetupRefusesUnknownParent: a commit listed before its parent is an error saying so.
func TestSetupRefusesUnknownParent(t *testing.T) {
	f := newFake("", "")
	_, err := f.apply([]byte(`{"commits":[{"repo":"o/r","SHA":"2222222222222222222222222222222222222222","Parents":["1111111111111111111111111111111111111111"]}]}`))
	if err == nil || !strings.Contains(err.Error(), "list parents first") {
		t.Errorf("apply: %v, want the unknown parent refused", err)
	}
	if _, err := f.apply([]byte(`{"comits":[]}`)); err == nil {
		t.Errorf("apply of an unknown field: no error")
	}
}

// TestRunRefusesNonLoopback: the fake never listens where other machines reach it.
func TestRunRefusesNonLoopback(t *testing.T) {
	err := run(t.Context(), []string{"-listen", "0.0.0.0:0"}, os.Stdout, os.Stderr)
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("run -listen 0.0.0.0:0: %v", err)
	}
}

// TestFakeServesReleaseFiles: a release's attached file at github.com's download path, and
// nothing outside the releases folder.
func TestFakeServesReleaseFiles(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "o", "r", "v1"), 0o755)
	os.WriteFile(filepath.Join(dir, "o", "r", "v1", "bin"), []byte("binary"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret"), []byte("no"), 0o644)
	srv := httptest.NewServer(newFake("", dir))
	defer srv.Close()
	for path, want := range map[string]int{
		"/o/r/releases/download/v1/bin":       200,
		"/o/r/releases/download/v1/missing":   404,
		"/o/r/releases/download/../../secret": 404,
		"/o/r/releases/download/v1":           404,
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// TestFakeReleasesAPI: a release made as `gh release create` makes it with files (a draft,
// its assets uploaded to the uploads API, then published), read by go-github, is served at the
// download path once published, and not while a draft; a second asset of one name and a second
// release of one tag are refused as GitHub refuses them.
func TestFakeReleasesAPI(t *testing.T) {
	f := newFake("", "")
	srv := httptest.NewServer(f)
	defer srv.Close()
	if _, err := f.apply([]byte(`{"Repos":[{"Owner":"o","Name":"r","DefaultBranch":"main"}],"Tokens":{"tok":"github-actions[bot]"}}`)); err != nil {
		t.Fatal(err)
	}
	gh, err := github.NewClient(nil).WithAuthToken("tok").WithEnterpriseURLs(srv.URL+"/api/v3/", srv.URL+"/api/uploads/")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	download := func(name string) int {
		resp, err := http.Get(srv.URL + "/o/r/releases/download/v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	rel, _, err := gh.Repositories.CreateRelease(ctx, "o", "r", &github.RepositoryRelease{TagName: github.String("v1.0.0"), Draft: github.Bool(true), GenerateReleaseNotes: github.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/api/uploads/repos/o/r/releases/" + fmtID(rel.GetID()) + "/assets{?name,label}"; rel.GetUploadURL() != want {
		t.Errorf("upload_url %q, want %q", rel.GetUploadURL(), want)
	}
	file := filepath.Join(t.TempDir(), "bin")
	os.WriteFile(file, []byte("binary"), 0o644)
	for i, want := range []bool{true, false} {
		fh, _ := os.Open(file)
		_, _, err := gh.Repositories.UploadReleaseAsset(ctx, "o", "r", rel.GetID(), &github.UploadOptions{Name: "bin"}, fh)
		fh.Close()
		if (err == nil) != want {
			t.Errorf("upload %d of bin: %v, want ok %v", i+1, err, want)
		}
	}
	if code := download("bin"); code != 404 {
		t.Errorf("a draft's file downloaded: %d, want 404", code)
	}
	if _, _, err := gh.Repositories.EditRelease(ctx, "o", "r", rel.GetID(), &github.RepositoryRelease{Draft: github.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	got, _, err := gh.Repositories.GetReleaseByTag(ctx, "o", "r", "v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetDraft() || len(got.Assets) != 1 || got.Assets[0].GetSize() != 6 || got.GetBody() == "" ||
		got.Assets[0].GetBrowserDownloadURL() != srv.URL+"/o/r/releases/download/v1.0.0/bin" {
		t.Errorf("the published release: %+v", got)
	}
	if latest, _, err := gh.Repositories.GetLatestRelease(ctx, "o", "r"); err != nil || latest.GetID() != rel.GetID() {
		t.Errorf("the latest release: %v, %v; want %d", latest.GetID(), err, rel.GetID())
	}
	if code := download("bin"); code != 200 {
		t.Errorf("the published release's file: %d, want 200", code)
	}
	if code := download("other"); code != 404 {
		t.Errorf("a file the release has not: %d, want 404", code)
	}
	if _, _, err := gh.Repositories.CreateRelease(ctx, "o", "r", &github.RepositoryRelease{TagName: github.String("v1.0.0")}); err == nil {
		t.Error("a second release of v1.0.0 was created")
	}
	st := f.api.State()
	if len(st.Releases) != 1 || st.Releases[0].Assets[0].SHA256 != binarySHA {
		t.Errorf("state: %+v", st.Releases)
	}
}

func fmtID(id int64) string { return strconv.FormatInt(id, 10) }

// binarySHA is the SHA-256 of "binary".
const binarySHA = "9a3a45d01531a20e89ac6ae10b0b0beb0492acd7216a368aa062d1a5fecaf9cd"
