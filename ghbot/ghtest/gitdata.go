package ghtest

// The Git Data API (blobs, trees, commits, refs), the compare API and the commit listing, over
// an in-memory object store per repository. Trees are kept flat (full path → blob) and every
// directory of a stored tree is registered as a tree of its own, so GET of a subtree works as
// on GitHub. Ref updates are checked as GitHub checks them: PATCH without force is refused with
// 422 "Update is not a fast forward" unless the new commit descends from the current one, and
// POST of an existing ref is refused with 422 "Reference already exists".

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// GitCommit is a commit of the fake's object store. Tree is "" for commits seeded with
// AddCommit without files (a commit graph for baseline resolution needs no content).
type GitCommit struct {
	SHA     string
	Parents []string
	Message string
	Date    time.Time
	Tree    string
}

type gitRepo struct {
	blobs   map[string][]byte
	trees   map[string]map[string]string // tree sha → path → blob sha (flat, every file below it)
	commits map[string]*GitCommit
	refs    map[string]string // "heads/main" → commit sha
}

func (s *Server) git(repo string) *gitRepo {
	if s.gitRepos == nil {
		s.gitRepos = map[string]*gitRepo{}
	}
	g := s.gitRepos[repo]
	if g == nil {
		g = &gitRepo{blobs: map[string][]byte{}, trees: map[string]map[string]string{}, commits: map[string]*GitCommit{}, refs: map[string]string{}}
		s.gitRepos[repo] = g
	}
	return g
}

func hashOf(kind string, parts ...string) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s\x00", kind)
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\x00", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// putTree stores a flat tree and every directory in it as a tree; it returns the tree's sha.
func (g *gitRepo) putTree(files map[string]string) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var parts []string
	dirs := map[string]bool{}
	for _, p := range paths {
		parts = append(parts, p, files[p])
		if d, _, ok := strings.Cut(p, "/"); ok {
			dirs[d] = true
		}
	}
	sha := hashOf("tree", parts...)
	if _, ok := g.trees[sha]; ok {
		return sha
	}
	g.trees[sha] = files
	for d := range dirs {
		sub := map[string]string{}
		for p, b := range files {
			if rest, ok := strings.CutPrefix(p, d+"/"); ok {
				sub[rest] = b
			}
		}
		g.putTree(sub)
	}
	return sha
}

// subtreeSHA returns the sha of the tree of directory dir (no slash) within files.
func (g *gitRepo) subtreeSHA(files map[string]string, dir string) string {
	sub := map[string]string{}
	for p, b := range files {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
			sub[rest] = b
		}
	}
	return g.putTree(sub)
}

// AddCommit seeds a commit (parents must exist already) and returns its sha: c.SHA, or a
// made-up one when empty. Files, when given, become its tree.
func (s *Server) AddCommit(repo string, c GitCommit, files map[string][]byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.git(repo)
	for _, p := range c.Parents {
		if g.commits[p] == nil {
			panic(fmt.Sprintf("ghtest: AddCommit %s: parent %s unknown", c.SHA, p))
		}
	}
	if c.Date.IsZero() {
		c.Date = s.now()
	}
	flat := map[string]string{}
	for p, data := range files {
		b := hashOf("blob", string(data))
		g.blobs[b] = data
		flat[p] = b
	}
	c.Tree = g.putTree(flat)
	if c.SHA == "" {
		c.SHA = hashOf("commit", append([]string{c.Tree, c.Message, c.Date.Format(time.RFC3339Nano)}, c.Parents...)...)
	}
	cc := c
	cc.Parents = append([]string(nil), c.Parents...)
	g.commits[c.SHA] = &cc
	return c.SHA
}

// SetRef points ref ("heads/main") at sha, as a force push does; "" deletes the ref.
func (s *Server) SetRef(repo, ref, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.git(repo)
	if sha == "" {
		delete(g.refs, ref)
		return
	}
	g.refs[ref] = sha
}

// Ref returns the commit ref ("heads/main") points at, "" when it does not exist.
func (s *Server) Ref(repo, ref string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.git(repo).refs[ref]
}

// Commit returns a commit of the object store.
func (s *Server) Commit(repo, sha string) (GitCommit, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.git(repo).commits[sha]
	if c == nil {
		return GitCommit{}, false
	}
	cc := *c
	cc.Parents = append([]string(nil), c.Parents...)
	return cc, true
}

// Files returns every file of the tree at ref ("heads/data"), nil when the ref does not exist.
func (s *Server) Files(repo, ref string) map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.git(repo)
	c := g.commits[g.refs[ref]]
	if c == nil {
		return nil
	}
	out := map[string][]byte{}
	for p, b := range g.trees[c.Tree] {
		out[p] = g.blobs[b]
	}
	return out
}

// OnGit sets a function called with the method and path (without the Enterprise prefix) of every
// Git Data request before it is handled, outside the server's lock: a test can block in it to
// force an interleaving of concurrent writers.
func (s *Server) OnGit(f func(method, path string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gitHook = f
}

// beforeGit calls the OnGit function for Git Data, compare and commit-listing requests.
func (s *Server) beforeGit(method, path string) {
	s.mu.Lock()
	f := s.gitHook
	s.mu.Unlock()
	seg := strings.Split(strings.Trim(path, "/"), "/")
	if f != nil && len(seg) >= 4 && seg[0] == "repos" && (seg[3] == "git" || seg[3] == "compare" || seg[3] == "commits") {
		f(method, path)
	}
}

// routeGit handles the Git Data, compare and commit-listing routes; it reports whether the path
// was one of them.
func (h *handler) routeGit(seg []string) bool {
	if len(seg) < 4 || seg[0] != "repos" {
		return false
	}
	repo := seg[1] + "/" + seg[2]
	m := h.r.Method
	rest := seg[3:]
	is := func(method string, pattern ...string) bool {
		if m != method || len(rest) != len(pattern) {
			return false
		}
		for i, p := range pattern {
			if p != "*" && p != rest[i] {
				return false
			}
		}
		return true
	}
	g := h.s.git(repo)
	switch {
	case is("POST", "git", "blobs"):
		h.createBlob(g)
	case is("GET", "git", "blobs", "*"):
		h.getBlob(g, rest[2])
	case is("POST", "git", "trees"):
		h.createTree(g)
	case is("GET", "git", "trees", "*"):
		h.getTree(g, rest[2])
	case is("POST", "git", "commits"):
		h.createCommit(g)
	case is("GET", "git", "commits", "*"):
		h.getGitCommit(g, rest[2])
	case m == "GET" && len(rest) >= 3 && rest[0] == "git" && rest[1] == "ref":
		h.getRef(g, strings.Join(rest[2:], "/"))
	case is("POST", "git", "refs"):
		h.createRef(g)
	case m == "PATCH" && len(rest) >= 3 && rest[0] == "git" && rest[1] == "refs":
		h.updateRef(g, strings.Join(rest[2:], "/"))
	case m == "GET" && len(rest) >= 2 && rest[0] == "compare":
		h.compare(g, strings.Join(rest[1:], "/")) // a branch name may hold slashes
	case is("GET", "commits"):
		h.listCommits(g, repo)
	default:
		return false
	}
	return true
}

func (h *handler) createBlob(g *gitRepo) {
	var in struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if err := json.Unmarshal(h.body, &in); err != nil || in.Content == nil {
		writeError(h.w, http.StatusUnprocessableEntity, "Invalid request: content is required")
		return
	}
	data := []byte(*in.Content)
	switch in.Encoding {
	case "base64":
		d, err := base64.StdEncoding.DecodeString(*in.Content)
		if err != nil {
			writeError(h.w, http.StatusUnprocessableEntity, "Invalid request: content is not valid Base64")
			return
		}
		data = d
	case "", "utf-8":
	default:
		writeError(h.w, http.StatusUnprocessableEntity, "Invalid request: encoding must be utf-8 or base64")
		return
	}
	sha := hashOf("blob", string(data))
	g.blobs[sha] = data
	h.json(http.StatusCreated, github.Blob{SHA: github.String(sha), Size: github.Int(len(data))})
}

func (h *handler) getBlob(g *gitRepo, sha string) {
	data, ok := g.blobs[sha]
	if !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	h.json(200, github.Blob{SHA: github.String(sha), Size: github.Int(len(data)), Encoding: github.String("base64"),
		Content: github.String(base64.StdEncoding.EncodeToString(data))})
}

func (h *handler) createTree(g *gitRepo) {
	var in struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct {
			Path    string  `json:"path"`
			Mode    string  `json:"mode"`
			Type    string  `json:"type"`
			SHA     *string `json:"sha"`
			Content *string `json:"content"`
		} `json:"tree"`
	}
	if err := json.Unmarshal(h.body, &in); err != nil {
		writeError(h.w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	files := map[string]string{}
	if in.BaseTree != "" {
		base, ok := g.trees[in.BaseTree]
		if !ok {
			writeError(h.w, http.StatusUnprocessableEntity, "Invalid tree info: base_tree "+in.BaseTree+" not found")
			return
		}
		for p, b := range base {
			files[p] = b
		}
	}
	for _, e := range in.Tree {
		switch {
		case e.Path == "" || strings.HasPrefix(e.Path, "/") || strings.HasSuffix(e.Path, "/") || strings.Contains(e.Path, "//"):
			writeError(h.w, http.StatusUnprocessableEntity, "Invalid tree info: path "+e.Path)
			return
		case e.Content != nil:
			b := hashOf("blob", *e.Content)
			g.blobs[b] = []byte(*e.Content)
			files[e.Path] = b
		case e.SHA == nil:
			// sha: null deletes the file, or the directory and all below it.
			if in.BaseTree == "" {
				writeError(h.w, http.StatusUnprocessableEntity, "Invalid tree info: a deletion needs base_tree")
				return
			}
			delete(files, e.Path)
			for p := range files {
				if strings.HasPrefix(p, e.Path+"/") {
					delete(files, p)
				}
			}
		case e.Type == "tree":
			sub, ok := g.trees[*e.SHA]
			if !ok {
				writeError(h.w, http.StatusUnprocessableEntity, "Invalid tree info: tree "+*e.SHA+" not found")
				return
			}
			for p, b := range sub {
				files[e.Path+"/"+p] = b
			}
		default:
			if _, ok := g.blobs[*e.SHA]; !ok {
				writeError(h.w, http.StatusUnprocessableEntity, "Invalid tree info: blob "+*e.SHA+" not found")
				return
			}
			files[e.Path] = *e.SHA
		}
	}
	sha := g.putTree(files)
	h.json(http.StatusCreated, h.treeJSON(g, sha, true))
}

// treeJSON lists a tree: its direct entries, or every entry below it when recursive.
func (h *handler) treeJSON(g *gitRepo, sha string, recursive bool) *github.Tree {
	files := g.trees[sha]
	t := &github.Tree{SHA: github.String(sha), Truncated: github.Bool(false), Entries: []*github.TreeEntry{}}
	seen := map[string]bool{}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		dirs := strings.Split(p, "/")
		for i := 1; i < len(dirs); i++ {
			d := strings.Join(dirs[:i], "/")
			if seen[d] || (!recursive && i > 1) {
				continue
			}
			seen[d] = true
			t.Entries = append(t.Entries, &github.TreeEntry{Path: github.String(d), Mode: github.String("040000"), Type: github.String("tree"),
				SHA: github.String(g.subtreeSHA(files, d))})
		}
		if !recursive && len(dirs) > 1 {
			continue
		}
		t.Entries = append(t.Entries, &github.TreeEntry{Path: github.String(p), Mode: github.String("100644"), Type: github.String("blob"),
			SHA: github.String(files[p]), Size: github.Int(len(g.blobs[files[p]]))})
	}
	return t
}

func (h *handler) getTree(g *gitRepo, sha string) {
	if _, ok := g.trees[sha]; !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	h.json(200, h.treeJSON(g, sha, h.r.URL.Query().Get("recursive") != ""))
}

func (h *handler) gitCommitJSON(c *GitCommit) *github.Commit {
	out := &github.Commit{SHA: github.String(c.SHA), Message: github.String(c.Message),
		Tree:   &github.Tree{SHA: github.String(c.Tree)},
		Author: &github.CommitAuthor{Name: github.String("fake"), Date: &github.Timestamp{Time: c.Date}}}
	out.Committer = out.Author
	for _, p := range c.Parents {
		out.Parents = append(out.Parents, &github.Commit{SHA: github.String(p)})
	}
	return out
}

func (h *handler) createCommit(g *gitRepo) {
	var in struct {
		Message string   `json:"message"`
		Tree    string   `json:"tree"`
		Parents []string `json:"parents"`
	}
	if err := json.Unmarshal(h.body, &in); err != nil {
		writeError(h.w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	if _, ok := g.trees[in.Tree]; !ok {
		writeError(h.w, http.StatusUnprocessableEntity, "Tree SHA does not exist")
		return
	}
	for _, p := range in.Parents {
		if g.commits[p] == nil {
			writeError(h.w, http.StatusUnprocessableEntity, "Parent SHA does not exist or is not a commit object")
			return
		}
	}
	c := &GitCommit{Message: in.Message, Tree: in.Tree, Parents: in.Parents, Date: h.s.now()}
	c.SHA = hashOf("commit", append([]string{c.Tree, c.Message, c.Date.Format(time.RFC3339Nano)}, c.Parents...)...)
	g.commits[c.SHA] = c
	h.json(http.StatusCreated, h.gitCommitJSON(c))
}

func (h *handler) getGitCommit(g *gitRepo, sha string) {
	c := g.commits[sha]
	if c == nil {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	h.json(200, h.gitCommitJSON(c))
}

func refJSON(ref, sha string) *github.Reference {
	return &github.Reference{Ref: github.String("refs/" + ref), Object: &github.GitObject{SHA: github.String(sha), Type: github.String("commit")}}
}

func (h *handler) getRef(g *gitRepo, ref string) {
	sha, ok := g.refs[ref]
	if !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	h.json(200, refJSON(ref, sha))
}

func (h *handler) createRef(g *gitRepo) {
	var in struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if err := json.Unmarshal(h.body, &in); err != nil || !strings.HasPrefix(in.Ref, "refs/") || strings.Count(in.Ref, "/") < 2 {
		writeError(h.w, http.StatusUnprocessableEntity, "Reference name must start with 'refs/' and have at least two slashes")
		return
	}
	ref := strings.TrimPrefix(in.Ref, "refs/")
	if _, ok := g.refs[ref]; ok {
		writeError(h.w, http.StatusUnprocessableEntity, "Reference already exists")
		return
	}
	if g.commits[in.SHA] == nil {
		writeError(h.w, http.StatusUnprocessableEntity, "Object does not exist")
		return
	}
	g.refs[ref] = in.SHA
	h.json(http.StatusCreated, refJSON(ref, in.SHA))
}

func (h *handler) updateRef(g *gitRepo, ref string) {
	var in struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if err := json.Unmarshal(h.body, &in); err != nil {
		writeError(h.w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	cur, ok := g.refs[ref]
	if !ok {
		writeError(h.w, http.StatusUnprocessableEntity, "Reference does not exist")
		return
	}
	if g.commits[in.SHA] == nil {
		writeError(h.w, http.StatusUnprocessableEntity, "Object does not exist")
		return
	}
	if !in.Force && !g.ancestors(in.SHA)[cur] {
		writeError(h.w, http.StatusUnprocessableEntity, "Update is not a fast forward")
		return
	}
	g.refs[ref] = in.SHA
	h.json(200, refJSON(ref, in.SHA))
}

// resolve returns the commit a sha or branch name names.
func (g *gitRepo) resolve(name string) *GitCommit {
	if c := g.commits[name]; c != nil {
		return c
	}
	for _, r := range []string{name, "heads/" + name, strings.TrimPrefix(name, "refs/")} {
		if sha, ok := g.refs[r]; ok {
			return g.commits[sha]
		}
	}
	return nil
}

// ancestors returns every commit reachable from sha, itself included.
func (g *gitRepo) ancestors(sha string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{sha}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[s] || g.commits[s] == nil {
			continue
		}
		seen[s] = true
		stack = append(stack, g.commits[s].Parents...)
	}
	return seen
}

// mergeBase returns the common ancestor of a and b nearest to b (breadth first from b).
func (g *gitRepo) mergeBase(a, b string) string {
	inA := g.ancestors(a)
	seen := map[string]bool{}
	queue := []string{b}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if seen[s] || g.commits[s] == nil {
			continue
		}
		seen[s] = true
		if inA[s] {
			return s
		}
		queue = append(queue, g.commits[s].Parents...)
	}
	return ""
}

func (h *handler) compare(g *gitRepo, spec string) {
	baseName, headName, ok := strings.Cut(spec, "...")
	base, head := g.resolve(baseName), g.resolve(headName)
	if !ok || base == nil || head == nil {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	mb := g.mergeBase(base.SHA, head.SHA)
	if mb == "" {
		writeError(h.w, http.StatusNotFound, "No common ancestor between "+baseName+" and "+headName+".")
		return
	}
	ahead := len(g.ancestors(head.SHA)) - len(g.ancestors(mb))
	behind := len(g.ancestors(base.SHA)) - len(g.ancestors(mb))
	status := "diverged"
	switch {
	case ahead == 0 && behind == 0:
		status = "identical"
	case behind == 0:
		status = "ahead"
	case ahead == 0:
		status = "behind"
	}
	h.json(200, github.CommitsComparison{
		BaseCommit:      h.repoCommitJSON(g, base),
		MergeBaseCommit: h.repoCommitJSON(g, g.commits[mb]),
		Status:          github.String(status), AheadBy: github.Int(ahead), BehindBy: github.Int(behind),
		TotalCommits: github.Int(ahead),
	})
}

func (h *handler) repoCommitJSON(g *gitRepo, c *GitCommit) *github.RepositoryCommit {
	rc := &github.RepositoryCommit{SHA: github.String(c.SHA), Commit: h.gitCommitJSON(c)}
	for _, p := range c.Parents {
		rc.Parents = append(rc.Parents, &github.Commit{SHA: github.String(p)})
	}
	return rc
}

// listCommits lists the commits reachable from ?sha= (default: the default branch), newest
// first as GitHub does (by date, then in breadth-first order from the start), paginated.
func (h *handler) listCommits(g *gitRepo, repo string) {
	start := h.r.URL.Query().Get("sha")
	if start == "" {
		start = h.s.repos[repo].DefaultBranch
		if start == "" {
			start = "main"
		}
	}
	c := g.resolve(start)
	if c == nil {
		writeError(h.w, http.StatusNotFound, "No commit found for SHA: "+start)
		return
	}
	order := map[string]int{}
	queue := []string{c.SHA}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if _, ok := order[s]; ok || g.commits[s] == nil {
			continue
		}
		order[s] = len(order)
		queue = append(queue, g.commits[s].Parents...)
	}
	all := make([]*GitCommit, 0, len(order))
	for s := range order {
		all = append(all, g.commits[s])
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].Date.Equal(all[j].Date) {
			return all[i].Date.After(all[j].Date)
		}
		return order[all[i].SHA] < order[all[j].SHA]
	})
	lo, hi := h.page(len(all))
	out := []*github.RepositoryCommit{}
	for _, c := range all[lo:hi] {
		out = append(out, h.repoCommitJSON(g, c))
	}
	h.json(200, out)
}
