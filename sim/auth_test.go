package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAPIKey checks vLLM's --api-key: every route but the public ones (/health, /version,
// /metrics) wants "Authorization: Bearer KEY" and answers 401 {"error": "Unauthorized"}
// without it or with a wrong key; the scheme is case-insensitive; the key is never logged.
func TestAPIKey(t *testing.T) {
	const key = "sk-sim-s3cret"
	var logs bytes.Buffer
	s := startSim(t, func(c *Config) {
		c.APIKey = key
		c.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	completion := `{"model":"` + s.Profile().ServedModel + `","prompt":"hi","max_tokens":2}`
	type req struct{ method, path, body string }
	guarded := []req{
		{"GET", "/v1/models", ""},
		{"POST", "/v1/completions", completion},
		{"POST", "/v1/chat/completions", `{"model":"` + s.Profile().ServedModel + `","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`},
		{"POST", "/tokenize", `{"prompt":"hi"}`},
		{"POST", "/detokenize", `{"tokens":[1]}`},
		{"GET", "/v1/nothing", ""},
	}
	public := []req{{"GET", "/health", ""}, {"GET", "/version", ""}, {"GET", "/metrics", ""}}
	do := func(r req, auth string) (int, string) {
		hr, err := http.NewRequest(r.method, s.URL()+r.path, strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header.Set("Content-Type", "application/json")
		if auth != "" {
			hr.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, r := range guarded {
		for _, auth := range []string{"", "Bearer wrong", "Bearer " + key + "x", "Basic " + key, key, "Bearer"} {
			code, body := do(r, auth)
			if code != http.StatusUnauthorized {
				t.Errorf("%s %s with Authorization %q: %d, want 401", r.method, r.path, auth, code)
				continue
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(body), &got); err != nil || !cmp.Equal(got, map[string]any{"error": "Unauthorized"}) {
				t.Errorf("%s %s: 401 body %q, want vLLM's {\"error\": \"Unauthorized\"}", r.method, r.path, body)
			}
		}
		for _, auth := range []string{"Bearer " + key, "bearer " + key} {
			if code, body := do(r, auth); code == http.StatusUnauthorized {
				t.Errorf("%s %s with the right key (%q scheme): 401 %s", r.method, r.path, strings.Fields(auth)[0], body)
			}
		}
	}
	for _, r := range public {
		if code, _ := do(r, ""); code != http.StatusOK {
			t.Errorf("%s %s without a key: %d, want 200 (public in vLLM)", r.method, r.path, code)
		}
	}
	if code, _ := do(req{"OPTIONS", "/v1/completions", ""}, ""); code == http.StatusUnauthorized {
		t.Errorf("OPTIONS (CORS preflight) without a key: 401, want it let through as vLLM does")
	}
	s.Close()
	if strings.Contains(logs.String(), key) {
		t.Errorf("the simulator logged its API key:\n%s", logs.String())
	}
}

// TestNoAPIKeyOpen checks that without a key every route is open, as vLLM without --api-key.
func TestNoAPIKeyOpen(t *testing.T) {
	s := startSim(t, nil)
	resp, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/models without a key on an open server: %d", resp.StatusCode)
	}
}
