package ghbot

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v66/github"
	"github.com/sethvargo/go-githubactions"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

func TestNewClientTokenMasksAndActsAsActionsBot(t *testing.T) {
	e := newEnv(t)
	if got := e.output.String(); !strings.Contains(got, "::add-mask::"+testToken+"\n") {
		t.Errorf("workflow commands %q: want the token masked", got)
	}
	if diff := cmp.Diff(Identity{Login: ActionsBotLogin}, e.c.Identity()); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}
	res, err := e.c.UpsertComment(context.Background(), helloRepo, 2, "speedmatrix", "hello", "")
	if err != nil {
		t.Fatal(err)
	}
	st := e.srv.State()
	if len(st.Comments) != 1 || st.Comments[0].User != ActionsBotLogin || st.Comments[0].ID != res.ID {
		t.Errorf("comments %+v: want one by %s", st.Comments, ActionsBotLogin)
	}
}

func TestNewClientAppMasksKeyAndInstallationToken(t *testing.T) {
	for _, tt := range []struct {
		name       string
		enterprise bool
		suffix     string // appended to the server URL given as the API URL
	}{
		{name: "github.com"},
		{name: "enterprise host", enterprise: true},
		{name: "enterprise GITHUB_API_URL", enterprise: true, suffix: "/api/v3"},
		{name: "enterprise trailing slash", enterprise: true, suffix: "/api/v3/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvAt(t, tt.enterprise)
			c := e.appClient(t, e.apiURL()+tt.suffix)
			if diff := cmp.Diff(Identity{Login: "speedbot[bot]", App: true, AppID: 77, AppSlug: "speedbot"}, c.Identity()); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
			ctx := context.Background()
			if _, err := c.UpsertComment(ctx, helloRepo, 2, "speedmatrix", "hello", ""); err != nil {
				t.Fatal(err)
			}
			if _, err := c.StartCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{}); err != nil {
				t.Fatal(err)
			}
			st := e.srv.State()
			if len(st.Comments) != 1 || st.Comments[0].User != "speedbot[bot]" {
				t.Errorf("comments %+v: want one by speedbot[bot]", st.Comments)
			}
			if len(st.CheckRuns) != 1 || st.CheckRuns[0].AppID != 77 {
				t.Errorf("check runs %+v: want one of app 77", st.CheckRuns)
			}
			for _, call := range st.Calls {
				if call.Status >= 400 {
					t.Errorf("%s %s: %d", call.Method, call.Path, call.Status)
				}
				if tt.enterprise != strings.HasPrefix(call.Path, "/api/v3/") {
					t.Errorf("%s %s: enterprise=%v, wrong prefix", call.Method, call.Path, tt.enterprise)
				}
			}
			if n := len(st.CallsTo("POST", "/app/installations/99/access_tokens")); n != 1 {
				t.Errorf("installation token requested %d times, want 1 (it is cached)", n)
			}
			masks := e.output.String()
			if !strings.Contains(masks, "::add-mask::ghs_fake77_1\n") {
				t.Errorf("workflow commands %q: want the installation token masked", masks)
			}
			_, pemBytes := appKey(t)
			for _, line := range strings.Split(strings.TrimSpace(string(pemBytes)), "\n") {
				if strings.HasPrefix(line, "-----") {
					continue
				}
				if !strings.Contains(masks, "::add-mask::"+line+"\n") {
					t.Fatalf("key line %q not masked", line)
				}
			}
		})
	}
}

func TestNewClientAppKeyFromFile(t *testing.T) {
	e := newEnv(t)
	key, pemBytes := appKey(t)
	e.srv.AddApp(ghtest.App{ID: 5, Slug: "filebot", InstallationID: 6, PublicKey: &key.PublicKey})
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	c := e.client(t, Auth{Token: "ignored", AppID: 5, InstallationID: 6, PrivateKeyFile: path}, "")
	if got := c.Identity().Login; got != "filebot[bot]" {
		t.Errorf("login %q, want filebot[bot] (the App wins over a token)", got)
	}
}

func TestNewClientErrors(t *testing.T) {
	e := newEnv(t)
	key, pemBytes := appKey(t)
	e.srv.AddApp(ghtest.App{ID: 5, Slug: "bot", InstallationID: 6, PublicKey: &key.PublicKey})
	for _, tt := range []struct {
		name string
		auth Auth
		want string
	}{
		{"nothing", Auth{}, "no GitHub credentials"},
		{"no installation", Auth{AppID: 5, PrivateKey: pemBytes}, "installation id is missing"},
		{"no key", Auth{AppID: 5, InstallationID: 6}, "private key is missing"},
		{"bad key", Auth{AppID: 5, InstallationID: 6, PrivateKey: []byte("not a key")}, "PEM file"},
		{"missing key file", Auth{AppID: 5, InstallationID: 6, PrivateKeyFile: "/nonexistent/key.pem"}, "read private key file"},
		{"wrong app", Auth{AppID: 8, InstallationID: 6, PrivateKey: pemBytes}, "check the app id"},
		{"wrong installation", Auth{AppID: 5, InstallationID: 7, PrivateKey: pemBytes}, "check installation-id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient(context.Background(), tt.auth, "", WithActions(githubactions.New(githubactions.WithWriter(e.output))),
				WithRetry(RetryPolicy{MaxAttempts: 1}), WithTransport(e.srv.Transport()))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewClient: %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestAuthFromInputs(t *testing.T) {
	env := map[string]string{
		"INPUT_TOKEN": "tok", "INPUT_APP-ID": "12", "INPUT_INSTALLATION-ID": "34", "INPUT_PRIVATE-KEY": "PEM",
	}
	a := githubactions.New(githubactions.WithGetenv(func(k string) string { return env[k] }))
	got, err := AuthFromInputs(a)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Auth{Token: "tok", AppID: 12, InstallationID: 34, PrivateKey: []byte("PEM")}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	env["INPUT_APP-ID"] = "twelve"
	if _, err := AuthFromInputs(a); err == nil || !strings.Contains(err.Error(), "app-id") {
		t.Errorf("app-id twelve: %v, want an error naming app-id", err)
	}
}

// secondaryBody is GitHub's answer to a secondary rate limit.
const secondaryBody = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",` +
	`"documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`

func TestRetry(t *testing.T) {
	const path = "/repos/Codertocat/Hello-World/collaborators/"
	reset := func(e *env, d time.Duration) string {
		return strconvI(e.clock.Now().Add(d).Unix())
	}
	tests := []struct {
		name       string
		faults     func(e *env) []ghtest.Fault
		wantSleeps []time.Duration
		wantCalls  int
		wantErr    any // nil, or a pointer to the error type go-github returns
	}{
		{
			name:       "502 then success",
			faults:     func(*env) []ghtest.Fault { return []ghtest.Fault{{Path: path, Status: 502}} },
			wantSleeps: []time.Duration{time.Second}, wantCalls: 2,
		},
		{
			name: "5xx backoff doubles",
			faults: func(*env) []ghtest.Fault {
				return []ghtest.Fault{{Path: path, Status: 500}, {Path: path, Status: 503}, {Path: path, Status: 504}}
			},
			wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, wantCalls: 4,
		},
		{
			name:       "attempts are bounded",
			faults:     func(*env) []ghtest.Fault { return []ghtest.Fault{{Path: path, Status: 502, Times: 10}} },
			wantSleeps: []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, wantCalls: 5,
			wantErr: new(*github.ErrorResponse),
		},
		{
			name: "secondary rate limit honours Retry-After",
			faults: func(*env) []ghtest.Fault {
				return []ghtest.Fault{{Path: path, Status: 403, Header: http.Header{"Retry-After": {"3"}},
					Body: secondaryBody}}
			},
			wantSleeps: []time.Duration{3 * time.Second}, wantCalls: 2,
		},
		{
			name: "secondary rate limit 429",
			faults: func(*env) []ghtest.Fault {
				return []ghtest.Fault{{Path: path, Status: 429, Header: http.Header{"Retry-After": {"7"}}}}
			},
			wantSleeps: []time.Duration{7 * time.Second}, wantCalls: 2,
		},
		{
			name: "secondary rate limit without Retry-After waits a minute",
			faults: func(*env) []ghtest.Fault {
				return []ghtest.Fault{{Path: path, Status: 403, Body: secondaryBody}}
			},
			wantSleeps: []time.Duration{time.Minute}, wantCalls: 2,
		},
		{
			name: "secondary rate limit too long is returned",
			faults: func(*env) []ghtest.Fault {
				return []ghtest.Fault{{Path: path, Status: 403, Header: http.Header{"Retry-After": {"3600"}},
					Body: secondaryBody}}
			},
			wantCalls: 1, wantErr: new(*github.AbuseRateLimitError),
		},
		{
			name: "primary limit with a near reset waits for it",
			faults: func(e *env) []ghtest.Fault {
				return []ghtest.Fault{{Path: path, Status: 403, Header: http.Header{
					"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Reset": {reset(e, 10*time.Second)}},
					Body: `{"message":"API rate limit exceeded"}`}}
			},
			wantSleeps: []time.Duration{11 * time.Second}, wantCalls: 2,
		},
		{
			name: "primary limit with a far reset is returned",
			faults: func(e *env) []ghtest.Fault {
				return []ghtest.Fault{{Path: path, Status: 403, Header: http.Header{
					"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Reset": {reset(e, time.Hour)}},
					Body: `{"message":"API rate limit exceeded"}`}}
			},
			wantCalls: 1, wantErr: new(*github.RateLimitError),
		},
		{
			name: "a plain 403 is not retried",
			faults: func(*env) []ghtest.Fault {
				return []ghtest.Fault{{Path: path, Status: 403, Body: `{"message":"Resource not accessible by integration"}`}}
			},
			wantCalls: 1, wantErr: new(*github.ErrorResponse),
		},
		{
			name:      "a 404 is not retried",
			faults:    func(*env) []ghtest.Fault { return []ghtest.Fault{{Path: path, Status: 422}} },
			wantCalls: 1, wantErr: new(*github.ErrorResponse),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.srv.SetPermission(testRepo, "octocat", "write")
			for _, f := range tt.faults(e) {
				e.srv.Fail(f)
			}
			level, err := e.c.Permission(context.Background(), helloRepo, "octocat")
			if tt.wantErr == nil {
				if err != nil || level != "write" {
					t.Errorf("Permission = %q, %v; want write", level, err)
				}
			} else if err == nil || !errors.As(err, tt.wantErr) {
				t.Errorf("Permission = %q, %v; want an error of type %T", level, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantSleeps, e.clock.Sleeps()); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
			if got := len(e.srv.State().CallsTo("GET", path)); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
		})
	}
}

func strconvI(n int64) string { return strconv.FormatInt(n, 10) }

func TestRetryReplaysPOSTBody(t *testing.T) {
	e := newEnv(t)
	e.srv.Fail(ghtest.Fault{Method: "POST", Path: "/repos/Codertocat/Hello-World/issues/2/comments", Status: 502})
	res, err := e.c.UpsertComment(context.Background(), helloRepo, 2, "speedmatrix", "the body", "")
	if err != nil {
		t.Fatal(err)
	}
	st := e.srv.State()
	posts := st.CallsTo("POST", "/repos/Codertocat/Hello-World/issues/2/comments")
	if len(posts) != 2 || posts[0].Body != posts[1].Body || !strings.Contains(posts[1].Body, "the body") {
		t.Errorf("POSTs %+v: want the same body twice", posts)
	}
	if len(st.Comments) != 1 || st.Comments[0].ID != res.ID || !strings.HasSuffix(st.Comments[0].Body, "\nthe body") {
		t.Errorf("comments %+v", st.Comments)
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	e := newEnv(t)
	e.srv.Fail(ghtest.Fault{Status: 502, Times: 10})
	ctx, cancel := context.WithCancel(context.Background())
	c := e.client(t, Auth{Token: testToken}, "", WithClock(e.clock.Now, func(context.Context, time.Duration) error {
		cancel()
		return context.Canceled
	}))
	_, err := c.Permission(ctx, helloRepo, "octocat")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v: want context.Canceled", err)
	}
	if n := len(e.srv.State().Calls); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

// TestAppTokenScope (issue 20, item 12): an App client asks for its installation token with the
// scope's repositories and permissions in the request body, and the token it gets reaches no
// other repository; a permission name GitHub does not know is refused before any request.
func TestAppTokenScope(t *testing.T) {
	e := newEnv(t)
	key, pemBytes := appKey(t)
	e.srv.AddApp(ghtest.App{ID: 77, Slug: "speedbot", InstallationID: 99, PublicKey: &key.PublicKey})
	scope := TokenScope{Repositories: []string{"Hello-World"}, Permissions: map[string]string{"checks": "write", "pull_requests": "write", "metadata": "read"}}
	c := e.client(t, Auth{AppID: 77, InstallationID: 99, PrivateKey: pemBytes, Scope: scope}, "")
	st := e.srv.State()
	if len(st.Tokens) != 1 {
		t.Fatalf("%d tokens minted, want 1", len(st.Tokens))
	}
	if got := st.Tokens[0]; !slices.Equal(got.Repositories, scope.Repositories) || !maps.Equal(got.Permissions, scope.Permissions) {
		t.Errorf("token request asked for %v %v, want %v %v", got.Repositories, got.Permissions, scope.Repositories, scope.Permissions)
	}
	ctx := context.Background()
	if _, err := c.GetPullRequest(ctx, helloRepo, 2); err != nil {
		t.Errorf("the scoped repository: %v", err)
	}
	if _, err := c.GetPullRequest(ctx, Repo{Owner: "octo-org", Name: "octo-repo"}, 1); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("another repository: %v, want 403", err)
	}
	_, err := NewClient(ctx, Auth{AppID: 77, InstallationID: 99, PrivateKey: pemBytes, Scope: TokenScope{Permissions: map[string]string{"everything": "write"}}}, "",
		WithActions(githubactions.New(githubactions.WithWriter(e.output))), WithTransport(e.srv.Transport()))
	if err == nil || !strings.Contains(err.Error(), "token scope") {
		t.Errorf("unknown permission: %v", err)
	}
}
