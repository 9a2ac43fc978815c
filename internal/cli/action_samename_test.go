package cli

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestActionSameNameWarning (issue 34, item 5): with the workflow's GITHUB_TOKEN and
// github.fail_on_regression (the default) the check says that a same-named job could satisfy
// the required check, and how to avoid it; posted as a GitHub App (app-id, installation-id,
// private-key: what the examples pass), or with fail_on_regression off, it does not.
func TestActionSameNameWarning(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	for _, tc := range []struct {
		name  string
		app   bool
		extra string
		want  bool
	}{
		{name: "GITHUB_TOKEN", want: true},
		{name: "GITHUB_TOKEN, fail_on_regression off", extra: "github: {fail_on_regression: false}\n"},
		{name: "GitHub App", app: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStoreEnv(t, 0)
			if tc.extra != "" {
				e.writeConfig(actionConfig("") + "store: {dir: \"" + e.dir + "/store\", min_history: 3}\n" + tc.extra)
			}
			e.put(prBase)
			reportPR(e.actEnv)
			if tc.app {
				e.srv.AddApp(ghtest.App{ID: 77, Slug: "speedbot", InstallationID: 99, PublicKey: &key.PublicKey})
				e.srv.SetPermission(actRepo, "speedbot[bot]", "write")
				delete(e.vars, "INPUT_TOKEN")
				e.vars["INPUT_APP-ID"], e.vars["INPUT_INSTALLATION-ID"], e.vars["INPUT_PRIVATE-KEY"] = "77", "99", pemKey
			}
			writeArtifact(t, e.actEnv, prMeta("2"), map[string]*results.File{"results.json": scaled(t, 1)})
			mustRun(t, e.actEnv)
			c := oneCheck(t, e.srv.State(), prHead)
			if got := strings.Contains(c.Summary, "a pull request that adds one could satisfy a required `speedmatrix` check"); got != tc.want {
				t.Errorf("the check warns of a same-named job: %v, want %v:\n%s", got, tc.want, c.Summary)
			}
		})
	}
}
