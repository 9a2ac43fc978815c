package ghbot

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

const (
	testRepo  = "Codertocat/Hello-World"
	testToken = "ghp_testtoken"
	shaA      = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	shaB      = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
	shaC      = "0123456789abcdef0123456789abcdef01234567"
)

var helloRepo = Repo{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master"}

// fakeClock is a clock whose sleeps are recorded and pass no real time.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.t = c.t.Add(d)
	return nil
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// env is a fake GitHub with the Hello-World repository and a client on it.
type env struct {
	enterprise bool
	srv        *ghtest.Server
	c          *Client
	clock      *fakeClock
	output     *bytes.Buffer // what the client wrote as workflow commands (::add-mask::)
}

// newEnv starts a fake GitHub seeded with the Hello-World repository (pushed long ago) and
// PR #2 at shaA, and a client with GITHUB_TOKEN on it.
func newEnv(t testing.TB) *env { return newEnvAt(t, false) }

// newEnvAt is newEnv with an Enterprise fake (API under /api/v3) when enterprise is set.
func newEnvAt(t testing.TB, enterprise bool) *env {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	opts := []ghtest.Option{ghtest.WithClock(clock.Now)}
	if enterprise {
		opts = append(opts, ghtest.Enterprise())
	}
	srv := ghtest.New(t, opts...)
	srv.AddToken(testToken, ghtest.ActionsLogin)
	srv.AddRepo(ghtest.Repo{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master", PushedAt: time.Date(2019, 5, 15, 15, 0, 0, 0, time.UTC)})
	srv.AddPull(ghtest.Pull{Repo: testRepo, Number: 2, Author: "Codertocat", HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"})
	e := &env{enterprise: enterprise, srv: srv, clock: clock, output: &bytes.Buffer{}}
	e.c = e.client(t, Auth{Token: testToken}, e.apiURL())
	return e
}

// apiURL is the API URL to give a client: "" (github.com, reached through the fake's
// transport) or, for an Enterprise fake, its host.
func (e *env) apiURL() string {
	if e.enterprise {
		return e.srv.URL
	}
	return ""
}

// client returns a client on the fake; baseURL "" is github.com, through the fake's transport.
func (e *env) client(t testing.TB, auth Auth, baseURL string, opts ...Option) *Client {
	t.Helper()
	if baseURL == "" {
		opts = append([]Option{WithTransport(e.srv.Transport())}, opts...)
	}
	action := githubactions.New(githubactions.WithWriter(e.output), githubactions.WithGetenv(func(string) string { return "" }))
	all := append([]Option{
		WithActions(action), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		WithClock(e.clock.Now, e.clock.Sleep),
	}, opts...)
	c, err := NewClient(context.Background(), auth, baseURL, all...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

// appKey returns an RSA key (made once) and its PEM.
func appKey(t testing.TB) (*rsa.PrivateKey, []byte) {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(testKey)})
}

// appClient registers the App "speedbot" (id 77, installation 99) and returns a client for it.
func (e *env) appClient(t testing.TB, baseURL string) *Client {
	t.Helper()
	key, pemBytes := appKey(t)
	e.srv.AddApp(ghtest.App{ID: 77, Slug: "speedbot", InstallationID: 99, PublicKey: &key.PublicKey})
	return e.client(t, Auth{AppID: 77, InstallationID: 99, PrivateKey: pemBytes}, baseURL)
}
