package ghbot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
	"github.com/sethvargo/go-githubactions"
)

// ActionsBotLogin is the login of comments written with a workflow's GITHUB_TOKEN.
const ActionsBotLogin = "github-actions[bot]"

// Auth says how the bot authenticates: a token (GITHUB_TOKEN) or a GitHub App installation.
// When AppID is set the App is used, whatever Token holds (the token input of an action
// defaults to github.token).
type Auth struct {
	Token string

	AppID          int64
	InstallationID int64
	PrivateKey     []byte // PEM; or PrivateKeyFile
	PrivateKeyFile string

	// Login is the account a Token acts as, for a token that is not GITHUB_TOKEN (a personal
	// token): the bot finds its own comment by this login. Empty means github-actions[bot].
	Login string

	// Scope, for an App, narrows each installation token to these repositories (names without
	// the owner) and permissions (GitHub's names: checks, contents, issues, pull_requests, …
	// to "read" or "write"); the zero Scope asks for everything the installation holds.
	Scope TokenScope
}

// TokenScope is what an installation token is asked for: the repositories and permissions one
// step of the action needs, so that a token that leaks can do no more than that step.
type TokenScope struct {
	Repositories []string
	Permissions  map[string]string
}

// options returns the scope as ghinstallation's token request body; nil for the zero scope.
func (s TokenScope) options() (*github.InstallationTokenOptions, error) {
	if len(s.Repositories) == 0 && len(s.Permissions) == 0 {
		return nil, nil
	}
	o := &github.InstallationTokenOptions{Repositories: s.Repositories}
	if len(s.Permissions) > 0 {
		// InstallationPermissions' JSON names are GitHub's: go through them, so that a name it
		// does not know is an error here and not a silently broader token.
		b, err := json.Marshal(s.Permissions)
		if err != nil {
			return nil, err
		}
		var p github.InstallationPermissions
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("token scope: %w", err)
		}
		o.Permissions = &p
	}
	return o, nil
}

// AuthFromInputs reads the action inputs token, app-id, installation-id, private-key and
// private-key-file (INPUT_* variables) through go-githubactions.
func AuthFromInputs(a *githubactions.Action) (Auth, error) {
	auth := Auth{
		Token:          a.GetInput("token"),
		PrivateKey:     []byte(a.GetInput("private-key")),
		PrivateKeyFile: a.GetInput("private-key-file"),
	}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"app-id", &auth.AppID}, {"installation-id", &auth.InstallationID}} {
		v := a.GetInput(f.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return Auth{}, fmt.Errorf("input %s: %q is not a positive integer (the App's numeric id, shown on its settings page)", f.name, v)
		}
		*f.dst = n
	}
	if len(auth.PrivateKey) == 0 {
		auth.PrivateKey = nil
	}
	return auth, nil
}

// Identity is who the bot is on GitHub.
type Identity struct {
	// Login is the author login of the bot's comments: "<slug>[bot]" for an App,
	// github-actions[bot] for GITHUB_TOKEN.
	Login   string
	App     bool
	AppID   int64
	AppSlug string
}

// Client is the bot's GitHub client: go-github over a transport that authenticates, masks every
// token and retries.
type Client struct {
	gh       *github.Client
	identity Identity
	logger   *slog.Logger
	now      func() time.Time
}

type options struct {
	logger    *slog.Logger
	action    *githubactions.Action
	transport http.RoundTripper
	retry     RetryPolicy
	now       func() time.Time
	sleep     func(context.Context, time.Duration) error
}

// Option configures NewClient.
type Option func(*options)

// WithLogger sets the logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithActions sets the go-githubactions Action that masks tokens (default: githubactions.New(),
// writing to stdout).
func WithActions(a *githubactions.Action) Option { return func(o *options) { o.action = a } }

// WithTransport sets the transport below authentication and retries (default: a clone of
// http.DefaultTransport).
func WithTransport(rt http.RoundTripper) Option { return func(o *options) { o.transport = rt } }

// WithRetry sets the retry policy (default: DefaultRetryPolicy()).
func WithRetry(p RetryPolicy) Option { return func(o *options) { o.retry = p } }

// WithClock sets the clock and the sleep used between retries, for tests.
func WithClock(now func() time.Time, sleep func(context.Context, time.Duration) error) Option {
	return func(o *options) { o.now, o.sleep = now, sleep }
}

// NewClient returns a client for the API at baseURL: "" or https://api.github.com for
// github.com, otherwise a GitHub Enterprise Server URL (GITHUB_API_URL, with or without
// /api/v3). For an App it exchanges the key for an installation token and asks GET /app for the
// App's slug, so it needs the network; every token, and every line of the private key, is masked
// with ::add-mask:: before anything can print it.
func NewClient(ctx context.Context, auth Auth, baseURL string, opts ...Option) (*Client, error) {
	o := options{retry: DefaultRetryPolicy(), now: time.Now, sleep: sleepContext}
	for _, f := range opts {
		f(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.action == nil {
		o.action = githubactions.New()
	}
	if o.transport == nil {
		o.transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	retry := &retryTransport{next: o.transport, policy: o.retry, now: o.now, sleep: o.sleep, logger: o.logger}

	newGitHub := func(rt http.RoundTripper) (*github.Client, error) {
		gh := github.NewClient(&http.Client{Transport: rt})
		if baseURL == "" || strings.TrimRight(baseURL, "/") == "https://api.github.com" {
			return gh, nil
		}
		gh, err := gh.WithEnterpriseURLs(baseURL, baseURL)
		if err != nil {
			return nil, fmt.Errorf("GitHub API URL %q: %w", baseURL, err)
		}
		return gh, nil
	}
	probe, err := newGitHub(retry)
	if err != nil {
		return nil, err
	}
	// ghinstallation joins its own paths to BaseURL: give it go-github's resolved base, which
	// for Enterprise ends in /api/v3.
	apiBase := strings.TrimRight(probe.BaseURL.String(), "/")

	c := &Client{logger: o.logger, now: o.now}
	switch {
	case auth.AppID != 0:
		if auth.InstallationID == 0 {
			return nil, errors.New("GitHub App: the installation id is missing (set installation-id: the number at the end of the installation's settings URL)")
		}
		key := auth.PrivateKey
		if len(key) == 0 && auth.PrivateKeyFile != "" {
			key, err = os.ReadFile(auth.PrivateKeyFile)
			if err != nil {
				return nil, fmt.Errorf("GitHub App: read private key file: %w", err)
			}
		}
		if len(key) == 0 {
			return nil, errors.New("GitHub App: the private key is missing (set private-key to the PEM text, or private-key-file)")
		}
		maskPEM(o.action, key)
		atr, err := ghinstallation.NewAppsTransport(retry, auth.AppID, key)
		if err != nil {
			return nil, fmt.Errorf("GitHub App: %w (private-key must be the PEM file GitHub generated)", err)
		}
		atr.BaseURL = apiBase
		itr := ghinstallation.NewFromAppsTransport(atr, auth.InstallationID)
		itr.BaseURL = apiBase
		if itr.InstallationTokenOptions, err = auth.Scope.options(); err != nil {
			return nil, fmt.Errorf("GitHub App %d: %w", auth.AppID, err)
		}
		appGH, err := newGitHub(atr)
		if err != nil {
			return nil, err
		}
		app, _, err := appGH.Apps.Get(ctx, "")
		if err != nil {
			return nil, fmt.Errorf("GitHub App %d: GET /app: %w (check the app id and the private key)", auth.AppID, err)
		}
		if app.GetSlug() == "" {
			return nil, fmt.Errorf("GitHub App %d: GET /app returned no slug", auth.AppID)
		}
		c.identity = Identity{Login: app.GetSlug() + "[bot]", App: true, AppID: app.GetID(), AppSlug: app.GetSlug()}
		mt := &maskingTransport{itr: itr, action: o.action}
		if c.gh, err = newGitHub(mt); err != nil {
			return nil, err
		}
		// Fetch the installation token now, so a wrong installation id fails here.
		if _, err := mt.token(ctx); err != nil {
			return nil, fmt.Errorf("GitHub App %d: installation token: %w (check installation-id)", auth.AppID, err)
		}
	case auth.Token != "":
		o.action.AddMask(auth.Token)
		c.identity = Identity{Login: auth.Login}
		if c.identity.Login == "" {
			c.identity.Login = ActionsBotLogin
		}
		if c.gh, err = newGitHub(retry); err != nil {
			return nil, err
		}
		c.gh = c.gh.WithAuthToken(auth.Token)
	default:
		return nil, errors.New("no GitHub credentials: set token (e.g. ${{ github.token }}) or app-id, installation-id and private-key")
	}
	return c, nil
}

// Identity returns who the bot is.
func (c *Client) Identity() Identity { return c.identity }

// GitHub returns the underlying go-github client, for calls this package does not wrap.
func (c *Client) GitHub() *github.Client { return c.gh }

// maskingTransport masks each installation token (they are renewed hourly) before a request
// can use it.
type maskingTransport struct {
	itr    *ghinstallation.Transport
	action *githubactions.Action
	mu     sync.Mutex
	masked map[string]bool
}

func (t *maskingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, err := t.token(req.Context()); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.itr.RoundTrip(req)
}

// token returns the current installation token, masked.
func (t *maskingTransport) token(ctx context.Context) (string, error) {
	tok, err := t.itr.Token(ctx)
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.masked[tok] {
		if t.masked == nil {
			t.masked = map[string]bool{}
		}
		t.action.AddMask(tok)
		t.masked[tok] = true
	}
	return tok, nil
}

// maskPEM masks every line of a PEM key but its BEGIN/END armour: a multi-line value would
// otherwise be masked by its first line only.
func maskPEM(a *githubactions.Action, key []byte) {
	for _, line := range strings.Split(string(key), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "-----") {
			continue
		}
		a.AddMask(line)
	}
}
