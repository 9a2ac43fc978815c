// Command gh is the harness's stand-in for the GitHub CLI on the runner's PATH (GitHub's
// hosted runners have gh; the host that runs act may not, and the real one talks only HTTPS to
// a GitHub host): `gh release create`, as the shipped release workflow uses it, made with the
// REST calls gh makes, against the fake's API at GITHUB_API_URL (gh would derive it from
// --repo's host):
//
//  1. --verify-tag: the tag must exist on the repository (gh asks GraphQL for
//     refs/tags/TAG; here GET /repos/R/git/ref/tags/TAG), else it stops before creating anything;
//  2. --generate-notes: POST /repos/R/releases/generate-notes for the body;
//  3. POST /repos/R/releases, a draft when there are files to attach;
//  4. each file POSTed to the release's upload_url (?name=BASENAME), its Content-Type by its
//     extension, application/octet-stream otherwise;
//  5. PATCH the release draft: false (published), and print its html_url.
//
// A failure after the draft exists deletes the draft, as gh does. GH_TOKEN (or GITHUB_TOKEN)
// authenticates, as on a runner.
//
// It is built by the harness (go build ./internal/e2e/actrunner/testdata/gh) into the folder
// first on the runner's PATH; it is not part of the module's packages (testdata).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// createOpts are the flags of `gh release create` the stand-in knows.
type createOpts struct {
	tag, repo, title, notes, target string
	verifyTag, generate, draft, pre bool
	files                           []string
}

func parse(args []string) (createOpts, error) {
	var o createOpts
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		takes := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag needs an argument: %s", name)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "-R", "--repo":
			o.repo, err = takes()
		case "-t", "--title":
			o.title, err = takes()
		case "-n", "--notes":
			o.notes, err = takes()
		case "--target":
			o.target, err = takes()
		case "--verify-tag":
			o.verifyTag = true
		case "--generate-notes":
			o.generate = true
		case "-d", "--draft":
			o.draft = true
		case "-p", "--prerelease":
			o.pre = true
		default:
			if strings.HasPrefix(a, "-") {
				return o, fmt.Errorf("unknown flag: %s (the stand-in gh knows what the shipped workflows use)", a)
			}
			pos = append(pos, a)
		}
		if err != nil {
			return o, err
		}
	}
	if len(pos) == 0 {
		return o, fmt.Errorf("could not create: no tag name provided")
	}
	o.tag, o.files = pos[0], pos[1:]
	if o.repo == "" {
		o.repo = os.Getenv("GH_REPO")
	}
	if o.repo == "" {
		return o, fmt.Errorf("the stand-in gh needs --repo OWNER/NAME (or GH_REPO)")
	}
	return o, nil
}

func run(args []string, stdout io.Writer) error {
	if len(args) < 2 || args[0] != "release" || args[1] != "create" {
		return fmt.Errorf("gh stand-in: only `gh release create` is provided, not `gh %s`", strings.Join(args, " "))
	}
	o, err := parse(args[2:])
	if err != nil {
		return err
	}
	tok := os.Getenv("GH_TOKEN")
	if tok == "" {
		tok = os.Getenv("GITHUB_TOKEN")
	}
	if tok == "" {
		return fmt.Errorf("gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable. Example:\n  env:\n    GH_TOKEN: ${{ github.token }}")
	}
	api := strings.TrimSuffix(os.Getenv("GITHUB_API_URL"), "/")
	if api == "" {
		return fmt.Errorf("gh stand-in: GITHUB_API_URL is not set")
	}
	c := client{tok: tok}
	for _, f := range o.files {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("could not create: %w", err)
		}
	}
	repoURL := api + "/repos/" + o.repo
	if o.verifyTag {
		if code, _, err := c.do("GET", repoURL+"/git/ref/tags/"+url.PathEscape(o.tag), "", nil, nil); err != nil && code != http.StatusNotFound {
			return err
		} else if code == http.StatusNotFound {
			return fmt.Errorf("tag %s doesn't exist in the repo %s, aborting due to --verify-tag flag", o.tag, o.repo)
		}
	}
	body := o.notes
	name := o.title
	if o.generate {
		var notes struct{ Name, Body string }
		if _, _, err := c.do("POST", repoURL+"/releases/generate-notes", "application/json", jsonBody(map[string]any{"tag_name": o.tag}), &notes); err != nil {
			return err
		}
		if body != "" {
			body += "\n"
		}
		body += notes.Body
		if name == "" {
			name = notes.Name
		}
	}
	params := map[string]any{"tag_name": o.tag, "name": name, "body": body, "draft": o.draft || len(o.files) > 0, "prerelease": o.pre}
	if o.target != "" {
		params["target_commitish"] = o.target
	}
	var rel struct {
		URL       string `json:"url"`
		UploadURL string `json:"upload_url"`
		HTMLURL   string `json:"html_url"`
	}
	if _, _, err := c.do("POST", repoURL+"/releases", "application/json", jsonBody(params), &rel); err != nil {
		return err
	}
	if err := c.finish(o, rel.URL, rel.UploadURL, &rel.HTMLURL); err != nil {
		if len(o.files) > 0 && !o.draft {
			if _, _, derr := c.do("DELETE", rel.URL, "", nil, nil); derr != nil {
				return fmt.Errorf("%w (and deleting the draft release failed: %v)", err, derr)
			}
		}
		return err
	}
	fmt.Fprintln(stdout, rel.HTMLURL)
	return nil
}

// finish uploads the files and publishes the release, as gh does after creating the draft.
func (c client) finish(o createOpts, relURL, uploadURL string, htmlURL *string) error {
	base, _, _ := strings.Cut(uploadURL, "{")
	for _, f := range o.files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(filepath.Ext(f))
		if ct == "" {
			ct = "application/octet-stream"
		}
		q := url.Values{"name": {filepath.Base(f)}, "label": {""}}
		if _, _, err := c.do("POST", base+"?"+q.Encode(), ct, b, nil); err != nil {
			return fmt.Errorf("upload %s: %w", f, err)
		}
	}
	if len(o.files) == 0 || o.draft {
		return nil
	}
	var rel struct {
		HTMLURL string `json:"html_url"`
	}
	if _, _, err := c.do("PATCH", relURL, "application/json", jsonBody(map[string]any{"draft": false}), &rel); err != nil {
		return fmt.Errorf("publish the release: %w", err)
	}
	*htmlURL = rel.HTMLURL
	return nil
}

type client struct{ tok string }

// do makes one API call and decodes a 2xx answer into out; it returns the status and, for any
// other, an error with GitHub's message, as gh prints it.
func (c client) do(method, u, ct string, body []byte, out any) (int, []byte, error) {
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "token "+c.tok)
	req.Header.Set("Accept", "application/vnd.github+json")
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	hc := http.Client{Timeout: 5 * time.Minute}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		var e struct{ Message string }
		json.Unmarshal(b, &e)
		return resp.StatusCode, b, fmt.Errorf("HTTP %d: %s (%s)", resp.StatusCode, e.Message, u)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, b, fmt.Errorf("%s %s: decode the answer: %w", method, u, err)
		}
	}
	return resp.StatusCode, b, nil
}

func jsonBody(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
