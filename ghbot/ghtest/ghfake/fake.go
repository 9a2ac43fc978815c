package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// fake is the process's one server: the API, the git origin and the control endpoints.
type fake struct {
	api      *ghtest.Server
	gitRoot  string
	releases string // RELEASES/OWNER/NAME/TAG/FILE: the files attached to releases

	mu    sync.Mutex
	repos []string
}

func newFake(gitRoot, releases string) *fake {
	return &fake{api: ghtest.NewHandler(ghtest.Enterprise()), gitRoot: gitRoot, releases: releases}
}

// apply adds what the JSON setup b (ghtest.Setup) holds and returns the ids of its comments.
func (f *fake) apply(b []byte) ([]int64, error) {
	var s ghtest.Setup
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("decode the setup: %w (see ghtest.Setup for its fields)", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range s.Repos {
		f.api.AddRepo(r)
		f.repos = append(f.repos, r.FullName())
	}
	for tok, login := range s.Tokens {
		f.api.AddToken(tok, login)
	}
	for _, p := range s.Permissions {
		f.api.SetPermission(p.Repo, p.User, p.Level)
	}
	for _, c := range s.Commits {
		if _, ok := f.api.Commit(c.Repo, c.SHA); ok {
			continue
		}
		for _, p := range c.Parents {
			if _, ok := f.api.Commit(c.Repo, p); !ok {
				return nil, fmt.Errorf("commit %s of %s: parent %s unknown: list parents first", c.SHA, c.Repo, p)
			}
		}
		f.api.AddCommit(c.Repo, c.GitCommit, nil)
	}
	for k, r := range s.Refs {
		repo, ref, ok := strings.Cut(k, " ")
		if !ok {
			return nil, fmt.Errorf("ref key %q: want \"owner/name heads/branch\"", k)
		}
		f.api.SetRef(repo, ref, r.SHA)
	}
	for _, p := range s.Pulls {
		f.api.AddPull(p)
	}
	var ids []int64
	for _, c := range s.Comments {
		ids = append(ids, f.api.PutComment(c))
	}
	return ids, nil
}

// dump is the fake's state, with the files of ref in every repository.
func (f *fake) dump(ref string) ghtest.Dump {
	d := ghtest.Dump{State: f.api.State()}
	if ref == "" {
		return d
	}
	f.mu.Lock()
	repos := append([]string(nil), f.repos...)
	f.mu.Unlock()
	sort.Strings(repos)
	for _, repo := range repos {
		sha := f.api.Ref(repo, ref)
		if sha == "" {
			continue
		}
		if d.Refs == nil {
			d.Refs, d.Files = map[string]string{}, map[string]map[string]string{}
		}
		d.Refs[repo] = sha
		files := map[string]string{}
		for p, b := range f.api.Files(repo, ref) {
			files[p] = string(b)
		}
		d.Files[repo] = files
	}
	return d
}

// ServeHTTP routes: the control endpoints, the API under /api/v3, and git below everything else.
func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/_setup" && r.Method == http.MethodPost:
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ids, err := f.apply(b)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string][]int64{"comment_ids": ids})
	case r.URL.Path == "/_state" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(f.dump(r.URL.Query().Get("ref")))
	case strings.HasPrefix(r.URL.Path, "/api/"):
		f.api.ServeHTTP(w, r)
	case strings.Contains(r.URL.Path, "/releases/download/"):
		f.serveRelease(w, r)
	case f.gitRoot != "":
		f.serveGit(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveGit answers git's smart HTTP protocol for the bare repositories below gitRoot, any
// commit fetchable by its id (a workflow fetches the pinned sha, not a branch).
func (f *fake) serveGit(w http.ResponseWriter, r *http.Request) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		http.Error(w, "git is not installed: install git to serve repositories", http.StatusInternalServerError)
		return
	}
	// A clone URL without .git (as GitHub allows) reaches OWNER/NAME.git.
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) >= 2 && !strings.HasSuffix(parts[1], ".git") {
		parts[1] += ".git"
		r.URL.Path = "/" + strings.Join(parts, "/")
	}
	h := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + f.gitRoot,
			"GIT_HTTP_EXPORT_ALL=1",
			"HOME=" + os.TempDir(),
			"GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=uploadpack.allowAnySHA1InWant", "GIT_CONFIG_VALUE_0=true",
			"GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_VALUE_1=*",
		},
	}
	h.ServeHTTP(w, r)
}

// serveRelease answers GET /OWNER/NAME/releases/download/TAG/FILE, as github.com serves a
// release's attached files: a file uploaded to a published release through the API
// (ghtest's releases), else one of the releases folder.
func (f *fake) serveRelease(w http.ResponseWriter, r *http.Request) {
	p := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if r.Method != http.MethodGet || len(p) != 6 || p[2] != "releases" || p[3] != "download" {
		http.NotFound(w, r)
		return
	}
	for _, part := range p {
		if part == "" || part == "." || part == ".." {
			http.NotFound(w, r)
			return
		}
	}
	if b, ok := f.api.ReleaseAsset(p[0]+"/"+p[1], p[4], p[5]); ok {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
		return
	}
	if f.releases == "" {
		http.NotFound(w, r)
		return
	}
	http.ServeFile(w, r, filepath.Join(f.releases, p[0], p[1], p[4], p[5]))
}
