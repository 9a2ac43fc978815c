//go:build realrunner

package actrunner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// runRelease is the release of a version (issue 35): release.yml, copied unchanged, run for the
// push of tag v1.0.0 on a scratch repository that holds this module's source; its
// `release/make.sh --verify` must pass and its `gh release create` must leave on the fake a
// published release v1.0.0 with speedmatrix_linux_amd64, speedmatrix_linux_arm64 and
// SHA256SUMS, served at the download URL with the bytes the sums name. Then the action's first
// step, release/binary.sh, run in the tag's tree as action.yml runs it, downloads the binary
// of that release, checks it and uses it (found=true; `speedmatrix version` prints v1.0.0); the
// same step refuses a release whose binary was tampered with (found=false, a warning, nothing
// left at the binary's path).
//
// The scratch repository's release/SHA256SUMS and release/TAG are made by `release/make.sh
// v1.0.0` on a copy of this tree before the release commit is tagged, as a maintainer makes
// them, so that the test does not depend on the committed release/SHA256SUMS being current for
// the code (it is regenerated when a release is cut). The two binaries are built once there;
// the workflow's --verify rebuilds them from the shared Go build cache.
func runRelease(t *testing.T, h *harness, file string) {
	const tag = "v1.0.0"
	prep := filepath.Join(h.scratch, "release-src")
	copyTree(t, h.root, prep)
	// A repository, so that makeRepo's copy (the files git would track) leaves dist/ out.
	run(t, prep, "git", "init", "-q")
	start := time.Now()
	mk := exec.Command("bash", "release/make.sh", tag)
	mk.Dir = prep
	mk.Env = append(filteredEnv(), "GOTOOLCHAIN=local")
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("release/make.sh %s: %v\n%s", tag, err, out)
	}
	t.Logf("release/make.sh %s: the two release binaries built in %s", tag, time.Since(start).Round(time.Second))
	sumsFile := readFile(t, filepath.Join(prep, "release", "SHA256SUMS"))
	sums := map[string]string{}
	for _, l := range strings.Split(sumsFile, "\n") {
		if f := strings.Fields(l); len(f) == 2 && !strings.HasPrefix(l, "#") {
			sums[f[1]] = f[0]
		}
	}
	sums["SHA256SUMS"] = sha256hex([]byte(sumsFile))
	if len(sums) != 3 {
		t.Fatalf("release/make.sh wrote sums of %v, want the two binaries", sums)
	}

	r := h.makeRepo(t, "speedmatrix", prep, []commitStep{{role: "release", branch: "main"}})
	sha := r.sha["release"]
	bare := filepath.Join(h.gitRoot, owner, r.name+".git")
	run(t, bare, "git", "tag", tag, sha)
	run(t, r.work, "git", "tag", tag, sha)
	h.setup(t, ghtest.Setup{Refs: map[string]ghtest.SetupRef{r.full + " tags/" + tag: {SHA: sha}}})

	t.Run("tag-push", func(t *testing.T) {
		ev := event{"push", h.payload(t, r, "push/with-new-branch.payload.json", map[string]any{
			"ref": "refs/tags/" + tag, "before": strings.Repeat("0", 40), "after": sha, "created": true, "deleted": false,
			"forced": false, "head_commit.id": sha, "commits": []any{}, "base_ref": nil,
		}), sha, false}
		rw := h.runAct(t, r, file, "tag-"+tag, ev)
		if rw.exit != 0 {
			t.Errorf("act exited %d, want 0", rw.exit)
		}
		d := h.state(t)
		var rel *ghtest.Release
		for i, x := range d.State.Releases {
			if x.Repo == r.full && x.TagName == tag {
				rel = &d.State.Releases[i]
			}
		}
		if rel == nil {
			t.Fatalf("no release %s on %s: %d releases", tag, r.full, len(d.State.Releases))
		}
		if rel.Draft || rel.Name != tag || rel.Author != ghtest.ActionsLogin {
			t.Errorf("release %s: draft %v, name %q, author %q; want published, named %s, by %s", tag, rel.Draft, rel.Name, rel.Author, tag, ghtest.ActionsLogin)
		}
		got := map[string]string{}
		for _, a := range rel.Assets {
			got[a.Name] = a.SHA256
		}
		if diff := cmp.Diff(sums, got); diff != "" {
			t.Errorf("the release's files and their SHA-256 (-release/SHA256SUMS +attached):\n%s", diff)
		}
		names := make([]string, 0, len(sums))
		for n := range sums {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if b := download(t, h.api+"/"+r.full+"/releases/download/"+tag+"/"+n); sha256hex(b) != sums[n] {
				t.Errorf("the download URL of %s serves SHA-256 %s, want %s", n, sha256hex(b), sums[n])
			}
		}
		h.record(t, rw, fmt.Sprintf("release %s: %s", tag, strings.Join(names, ", ")))
	})
	if t.Failed() {
		return
	}

	// The action at the tag, as a workflow's `uses: OWNER/speedmatrix@v1.0.0` gets it.
	action := filepath.Join(h.scratch, "action-"+tag)
	run(t, "", "git", "clone", "-q", "--branch", tag, h.server+"/"+r.full, action)
	arch := map[string]string{"amd64": "speedmatrix_linux_amd64", "arm64": "speedmatrix_linux_arm64"}[runtime.GOARCH]
	if runtime.GOOS != "linux" || arch == "" {
		t.Skipf("binary.sh has no release binary for %s/%s", runtime.GOOS, runtime.GOARCH)
	}

	t.Run("action-downloads", func(t *testing.T) {
		out, log := h.binarySH(t, action, r.full)
		if out["found"] != "true" {
			t.Fatalf("binary.sh: found=%q, want true (the release binary)\n%s", out["found"], log)
		}
		if b, err := os.ReadFile(out["path"]); err != nil || sha256hex(b) != sums[arch] {
			t.Errorf("binary.sh's %s: %v, SHA-256 %s, want %s", out["path"], err, sha256hex(b), sums[arch])
		}
		v, err := exec.Command(out["path"], "version").CombinedOutput()
		if err != nil || !strings.Contains(string(v), tag) {
			t.Errorf("%s version: %v: %q, want %s", out["path"], err, v, tag)
		}
		if !strings.Contains(log, "release binary "+arch+" of "+tag) {
			t.Errorf("binary.sh did not say it used the release binary:\n%s", log)
		}
	})

	t.Run("action-refuses-tampered", func(t *testing.T) {
		// The same release of another repository, its binary one byte off: served by the fake
		// at the same download path, from its releases folder.
		const tampered = owner + "/speedmatrix-tampered"
		b := download(t, h.api+"/"+r.full+"/releases/download/"+tag+"/"+arch)
		b[len(b)/2] ^= 0xff
		dst := filepath.Join(h.releases, owner, "speedmatrix-tampered", tag)
		mustMkdir(t, dst)
		writeFile(t, filepath.Join(dst, arch), string(b), 0o755)
		out, log := h.binarySH(t, action, tampered)
		if out["found"] != "false" {
			t.Errorf("binary.sh: found=%q for a tampered binary, want false (build from source)\n%s", out["found"], log)
		}
		if !strings.Contains(log, "::warning") || !strings.Contains(log, "not the "+sums[arch]) {
			t.Errorf("binary.sh did not warn of the tampered binary:\n%s", log)
		}
		if _, err := os.Stat(out["path"]); err == nil {
			t.Errorf("the tampered binary was left at %s", out["path"])
		}
		if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out["path"]), "*")); len(m) != 0 {
			t.Errorf("binary.sh left files of the tampered download: %v", m)
		}
	})
}

// binarySH runs the action's release/binary.sh in the action's folder as action.yml does, with
// the action's repository named repo on the fake (GITHUB_SERVER_URL) and a fresh RUNNER_TEMP;
// it returns what it wrote to GITHUB_OUTPUT and its output.
func (h *harness) binarySH(t *testing.T, action, repo string) (map[string]string, string) {
	t.Helper()
	tmp := t.TempDir()
	output := filepath.Join(tmp, "github-output")
	cmd := exec.Command("bash", "./release/binary.sh")
	cmd.Dir = action
	cmd.Env = append(filteredEnv(), "RUNNER_TEMP="+filepath.Join(tmp, "runner-temp"),
		"GITHUB_OUTPUT="+output, "GITHUB_SERVER_URL="+h.server, "ACTION_REPOSITORY="+repo)
	mustMkdir(t, filepath.Join(tmp, "runner-temp"))
	start := time.Now()
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("release/binary.sh: %v\n%s", err, log)
	}
	t.Logf("release/binary.sh for %s: %s", repo, time.Since(start).Round(time.Millisecond))
	out := map[string]string{}
	for _, l := range strings.Split(readFile(t, output), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			out[k] = v
		}
	}
	return out, string(log)
}

func download(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return b
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
