package ghtest

// The releases API, as `gh release create` uses it: create a release (a draft first when it has
// files), generate its notes, upload its assets to the upload_url the release names (GitHub
// Enterprise's https://HOST/api/uploads/repos/…, uploads.github.com on github.com), publish it
// (PATCH draft false), read and delete it; ReleaseAsset gives a published release's file for
// the download URL /OWNER/NAME/releases/download/TAG/FILE that the fake's host serves.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// uploadsPrefix is the path of GitHub Enterprise Server's uploads API, on the API's host.
const uploadsPrefix = "/api/uploads"

// Release is a release of a repository, with its assets' metadata (their bytes stay in the
// server, not in State: ReleaseAsset returns them).
type Release struct {
	ID              int64
	Repo            string
	TagName         string
	TargetCommitish string
	Name            string
	Body            string
	Draft           bool
	Prerelease      bool
	Author          string
	CreatedAt       time.Time
	PublishedAt     time.Time // zero while a draft
	Assets          []ReleaseAsset
}

// ReleaseAsset is a file attached to a release: its name, size, type, the SHA-256 of its bytes
// and who uploaded it.
type ReleaseAsset struct {
	ID          int64
	Name        string
	Label       string
	ContentType string
	Size        int
	SHA256      string
	Uploader    string
	data        []byte
}

// ReleaseAsset returns the bytes of file name of the published release tag of repo, as
// github.com serves /OWNER/NAME/releases/download/TAG/FILE (a draft's files are not served).
func (s *Server) ReleaseAsset(repo, tag, name string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.releases {
		if r.Repo != repo || r.TagName != tag || r.Draft {
			continue
		}
		for _, a := range r.Assets {
			if a.Name == name {
				return a.data, true
			}
		}
	}
	return nil, false
}

// routeReleases answers repos/OWNER/NAME/releases…; upload is true for a request on the
// uploads API (assets are uploaded there only).
func (h *handler) routeReleases(m string, seg []string, upload bool) bool {
	if len(seg) < 4 || seg[0] != "repos" || seg[3] != "releases" {
		return false
	}
	repo := seg[1] + "/" + seg[2]
	if _, ok := h.s.repos[repo]; !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return true
	}
	switch {
	case upload && m == "POST" && len(seg) == 6 && seg[5] == "assets":
		h.withRelease(repo, seg[4], h.uploadAsset)
	case upload:
		writeError(h.w, http.StatusNotFound, "Not Found")
	case m == "GET" && len(seg) == 4:
		var out []map[string]any
		for i := len(h.s.releases) - 1; i >= 0; i-- { // newest first
			if r := h.s.releases[i]; r.Repo == repo {
				out = append(out, h.releaseJSON(r))
			}
		}
		h.json(200, out)
	case m == "POST" && len(seg) == 4:
		h.createRelease(repo)
	case m == "POST" && len(seg) == 5 && seg[4] == "generate-notes":
		h.generateNotes(repo)
	case m == "GET" && len(seg) == 6 && seg[4] == "tags":
		for _, r := range h.s.releases {
			if r.Repo == repo && r.TagName == seg[5] && !r.Draft {
				h.json(200, h.releaseJSON(r))
				return true
			}
		}
		writeError(h.w, http.StatusNotFound, "Not Found")
	case m == "GET" && len(seg) == 5 && seg[4] == "latest":
		for i := len(h.s.releases) - 1; i >= 0; i-- { // the newest published full release
			if r := h.s.releases[i]; r.Repo == repo && !r.Draft && !r.Prerelease {
				h.json(200, h.releaseJSON(r))
				return true
			}
		}
		writeError(h.w, http.StatusNotFound, "Not Found")
	case m == "GET" && len(seg) == 5:
		h.withRelease(repo, seg[4], func(r *Release) { h.json(200, h.releaseJSON(r)) })
	case m == "PATCH" && len(seg) == 5:
		h.withRelease(repo, seg[4], h.updateRelease)
	case m == "DELETE" && len(seg) == 5:
		h.withRelease(repo, seg[4], func(r *Release) {
			for i, x := range h.s.releases {
				if x == r {
					h.s.releases = append(h.s.releases[:i], h.s.releases[i+1:]...)
					break
				}
			}
			h.w.WriteHeader(http.StatusNoContent)
		})
	default:
		writeError(h.w, http.StatusNotFound, "Not Found")
	}
	return true
}

func (h *handler) withRelease(repo, id string, f func(*Release)) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err == nil {
		for _, r := range h.s.releases {
			if r.Repo == repo && r.ID == n {
				f(r)
				return
			}
		}
	}
	writeError(h.w, http.StatusNotFound, "Not Found")
}

// releaseRequest is the body of a create or update.
type releaseRequest struct {
	TagName         *string `json:"tag_name"`
	TargetCommitish *string `json:"target_commitish"`
	Name            *string `json:"name"`
	Body            *string `json:"body"`
	Draft           *bool   `json:"draft"`
	Prerelease      *bool   `json:"prerelease"`
	MakeLatest      *string `json:"make_latest"`
	GenerateNotes   *bool   `json:"generate_release_notes"`
}

func (h *handler) decodeRelease() (releaseRequest, bool) {
	var in releaseRequest
	if err := json.Unmarshal(h.body, &in); err != nil {
		writeError(h.w, http.StatusBadRequest, "Problems parsing JSON")
		return in, false
	}
	return in, true
}

func (h *handler) createRelease(repo string) {
	in, ok := h.decodeRelease()
	if !ok {
		return
	}
	if in.TagName == nil || *in.TagName == "" {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: tag_name is required")
		return
	}
	for _, r := range h.s.releases {
		if r.Repo == repo && r.TagName == *in.TagName {
			writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: release tag_name already_exists")
			return
		}
	}
	h.s.nextID++
	r := &Release{ID: h.s.nextID, Repo: repo, TagName: *in.TagName, TargetCommitish: h.s.repos[repo].DefaultBranch, Author: h.who.login, CreatedAt: h.s.now()}
	h.applyRelease(r, in)
	if in.GenerateNotes != nil && *in.GenerateNotes && r.Body == "" {
		r.Body = h.notes(repo, r.TagName)
	}
	h.s.releases = append(h.s.releases, r)
	h.json(http.StatusCreated, h.releaseJSON(r))
}

func (h *handler) updateRelease(r *Release) {
	in, ok := h.decodeRelease()
	if !ok {
		return
	}
	if in.TagName != nil {
		r.TagName = *in.TagName
	}
	h.applyRelease(r, in)
	h.json(200, h.releaseJSON(r))
}

func (h *handler) applyRelease(r *Release, in releaseRequest) {
	if in.TargetCommitish != nil && *in.TargetCommitish != "" {
		r.TargetCommitish = *in.TargetCommitish
	}
	if in.Name != nil {
		r.Name = *in.Name
	}
	if in.Body != nil {
		r.Body = *in.Body
	}
	if in.Prerelease != nil {
		r.Prerelease = *in.Prerelease
	}
	if in.Draft != nil {
		r.Draft = *in.Draft
	}
	if !r.Draft && r.PublishedAt.IsZero() {
		r.PublishedAt = h.s.now()
	}
}

// notes is the body GitHub generates for a release of tag: the changelog link (the fake keeps
// no merged pull requests to list).
func (h *handler) notes(repo, tag string) string {
	return fmt.Sprintf("**Full Changelog**: https://github.com/%s/commits/%s", repo, tag)
}

func (h *handler) generateNotes(repo string) {
	var in struct {
		TagName string `json:"tag_name"`
	}
	if err := json.Unmarshal(h.body, &in); err != nil || in.TagName == "" {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: tag_name is required")
		return
	}
	h.json(200, map[string]string{"name": in.TagName, "body": h.notes(repo, in.TagName)})
}

func (h *handler) uploadAsset(r *Release) {
	q := h.r.URL.Query()
	name := q.Get("name")
	if name == "" {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: name is required")
		return
	}
	for _, a := range r.Assets {
		if a.Name == name {
			writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: asset name already_exists")
			return
		}
	}
	if len(h.body) == 0 {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: the asset is empty")
		return
	}
	ct := h.r.Header.Get("Content-Type")
	if ct == "" {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: Content-Type is required")
		return
	}
	sum := sha256.Sum256(h.body)
	h.s.nextID++
	a := ReleaseAsset{ID: h.s.nextID, Name: name, Label: q.Get("label"), ContentType: ct, Size: len(h.body),
		SHA256: hex.EncodeToString(sum[:]), Uploader: h.who.login, data: append([]byte(nil), h.body...)}
	r.Assets = append(r.Assets, a)
	h.json(http.StatusCreated, h.assetJSON(r, a))
}

// host is the scheme and host the client called, for the URLs a release names.
func (h *handler) host() string {
	return strings.TrimSuffix(h.base, h.s.prefix)
}

func (h *handler) releaseJSON(r *Release) map[string]any {
	assets := []map[string]any{}
	for _, a := range r.Assets {
		assets = append(assets, h.assetJSON(r, a))
	}
	api := h.base + "/repos/" + r.Repo + "/releases/" + strconv.FormatInt(r.ID, 10)
	out := map[string]any{
		"id": r.ID, "tag_name": r.TagName, "target_commitish": r.TargetCommitish, "name": r.Name, "body": r.Body,
		"draft": r.Draft, "prerelease": r.Prerelease, "created_at": r.CreatedAt.UTC().Format(time.RFC3339),
		"author": map[string]any{"login": r.Author}, "assets": assets,
		"url": api, "assets_url": api + "/assets",
		"upload_url": h.host() + uploadsPrefix + "/repos/" + r.Repo + "/releases/" + strconv.FormatInt(r.ID, 10) + "/assets{?name,label}",
		"html_url":   h.host() + "/" + r.Repo + "/releases/tag/" + r.TagName,
	}
	if !r.PublishedAt.IsZero() {
		out["published_at"] = r.PublishedAt.UTC().Format(time.RFC3339)
	} else {
		out["published_at"] = nil
	}
	return out
}

func (h *handler) assetJSON(r *Release, a ReleaseAsset) map[string]any {
	return map[string]any{
		"id": a.ID, "name": a.Name, "label": a.Label, "content_type": a.ContentType, "size": a.Size, "state": "uploaded",
		"uploader":             map[string]any{"login": a.Uploader},
		"url":                  h.base + "/repos/" + r.Repo + "/releases/assets/" + strconv.FormatInt(a.ID, 10),
		"browser_download_url": h.host() + "/" + r.Repo + "/releases/download/" + r.TagName + "/" + a.Name,
		"digest":               "sha256:" + a.SHA256,
	}
}
