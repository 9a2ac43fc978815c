package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// setup does return a Client wired to a mux the test fills.
func setup(t *testing.T) (*Client, *http.ServeMux) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return New(srv.URL+"/v1", WithAPIKey("k")), mux
}

func TestVLLMShapes(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"glm","object":"model","owned_by":"vllm","root":"/models/glm","parent":null,"max_model_len":1048576,"permission":[]}]}`)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"version":"0.11.1"}`) })
	mux.HandleFunc("POST /tokenize", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		if in["model"] != "glm" || in["prompt"] != "a b c" {
			w.WriteHeader(400)
			return
		}
		io.WriteString(w, `{"count":4,"max_model_len":1048576,"tokens":[1,10,11,12],"token_strs":null}`)
	})
	mux.HandleFunc("POST /detokenize", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Model  string
			Tokens []int
		}
		json.NewDecoder(r.Body).Decode(&in)
		if in.Model != "glm" || len(in.Tokens) != 2 {
			w.WriteHeader(400)
			return
		}
		io.WriteString(w, `{"prompt":"b c"}`)
	})
	ctx := context.Background()
	models, err := c.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Model{{ID: "glm", OwnedBy: "vllm", Root: "/models/glm", MaxModelLen: 1048576}}, models); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if err := c.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}
	if v, err := c.Version(ctx); err != nil || v != "0.11.1" {
		t.Errorf("Version %q, %v", v, err)
	}
	toks, err := c.Tokenize(ctx, "glm", "a b c")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Tokens{IDs: []int{1, 10, 11, 12}, MaxModelLen: 1048576}, toks); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	if s, err := c.Detokenize(ctx, "glm", []int{11, 12}); err != nil || s != "b c" {
		t.Errorf("Detokenize %q, %v", s, err)
	}
	if _, err := c.Props(ctx); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Props on vLLM: %v, want ErrNotSupported", err)
	}
}

func TestLlamaCppShapes(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"models":[{"name":"tiny"}],"object":"list","data":[{"id":"tiny","object":"model","owned_by":"llamacpp","meta":{"n_ctx_train":2048}}]}`)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
		io.WriteString(w, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)
	})
	mux.HandleFunc("GET /props", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"default_generation_settings":{"n_ctx":4096},"total_slots":4,"build_info":"b11669-Debian"}`)
	})
	mux.HandleFunc("POST /tokenize", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		if _, ok := in["content"]; !ok {
			w.WriteHeader(500) // llama.cpp: "content" missing
			io.WriteString(w, `{"error":{"message":"\"content\" must be provided"}}`)
			return
		}
		io.WriteString(w, `{"tokens":[{"id":1,"piece":"<s>"},{"id":7,"piece":"hi"}]}`)
	})
	mux.HandleFunc("POST /detokenize", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		if _, ok := in["model"]; ok {
			w.WriteHeader(400)
			return
		}
		io.WriteString(w, `{"content":"hi"}`)
	})
	ctx := context.Background()
	models, err := c.Models(ctx)
	if err != nil || len(models) != 1 || models[0].ID != "tiny" || models[0].MaxModelLen != 0 {
		t.Errorf("Models %+v, %v", models, err)
	}
	var se *StatusError
	if err := c.Health(ctx); !errors.As(err, &se) || se.Status != 503 || se.Message != "Loading model" {
		t.Errorf("Health: %v, want 503 Loading model", err)
	}
	p, err := c.Props(ctx)
	if diff := cmp.Diff(Props{ContextSize: 4096, TotalSlots: 4, BuildInfo: "b11669-Debian"}, p); err != nil || diff != "" {
		t.Errorf("Props %v (-want +got):\n%s", err, diff)
	}
	toks, err := c.Tokenize(ctx, "tiny", "hi")
	if err != nil || !cmp.Equal(toks.IDs, []int{1, 7}) {
		t.Errorf("Tokenize %+v, %v", toks, err)
	}
	if s, err := c.Detokenize(ctx, "tiny", []int{7}); err != nil || s != "hi" {
		t.Errorf("Detokenize %q, %v", s, err)
	}
	if _, err := c.Version(ctx); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Version: %v, want ErrNotSupported", err)
	}
}

func TestOllamaMissingEndpoints(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"tiny-random","object":"model","created":1,"owned_by":"library"}]}`)
	})
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"version":"0.17.4"}`) })
	ctx := context.Background()
	if err := c.Health(ctx); err != nil {
		t.Errorf("Health without /health but with /v1/models: %v", err)
	}
	if v, err := c.Version(ctx); err != nil || v != "0.17.4" {
		t.Errorf("Version %q, %v", v, err)
	}
	if _, err := c.Tokenize(ctx, "tiny-random", "x"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Tokenize: %v, want ErrNotSupported", err)
	}
}

func TestDeadServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := New(url)
	if err := c.Health(context.Background()); err == nil || errors.Is(err, ErrNotSupported) {
		t.Errorf("Health of a closed port: %v", err)
	}
}

func TestDecodeTokenize(t *testing.T) {
	cases := []struct {
		body    string
		want    []int
		wantErr string
	}{
		{`{"tokens":[1,2,3],"count":3}`, []int{1, 2, 3}, ""},
		{`{"tokens":[]}`, []int{}, ""},
		{`{"tokens":[{"id":5,"piece":"a"}]}`, []int{5}, ""},
		{`{"tokens":[1,2],"count":3}`, nil, "count 3 but 2 tokens"},
		{`{"count":3}`, nil, `no "tokens"`},
		{`{"tokens":["a"]}`, nil, "want an integer id"},
		{`<html>`, nil, "not JSON"},
	}
	for _, tc := range cases {
		got, err := DecodeTokenize([]byte(tc.body))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.body, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !cmp.Equal(tc.want, got.IDs) {
			t.Errorf("%s: %v, %v", tc.body, got.IDs, err)
		}
	}
}

func FuzzDecodeTokenize(f *testing.F) {
	f.Add([]byte(`{"count":4,"max_model_len":1048576,"tokens":[1,10,11,12]}`))
	f.Add([]byte(`{"tokens":[{"id":1,"piece":"<s>"}]}`))
	f.Add([]byte(`{"tokens":[1e3, -1, 99999999999999999999]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		toks, err := DecodeTokenize(b)
		if err != nil {
			return
		}
		var r struct{ Count *int }
		if json.Unmarshal(b, &r) == nil && r.Count != nil && *r.Count != len(toks.IDs) {
			t.Errorf("accepted count %d with %d ids", *r.Count, len(toks.IDs))
		}
	})
}

// TestVersionInfoReadsSimulator: the built-in simulator's /version says its speedup; vLLM's
// says only its version.
func TestVersionInfoReadsSimulator(t *testing.T) {
	tests := []struct {
		name string
		body string
		want VersionInfo
	}{
		{"vllm", `{"version":"0.11.1"}`, VersionInfo{Version: "0.11.1"}},
		{"simulator", `{"version":"0.11.1","simulator":{"name":"speedmatrix sim","profile":"glm-5.3-flash-nvfp4-h200x2","speedup":20}}`,
			VersionInfo{Version: "0.11.1", Simulator: &SimulatorInfo{Profile: "glm-5.3-flash-nvfp4-h200x2", Speedup: 20}}},
		{"simulator at no speedup", `{"version":"x","simulator":{"name":"speedmatrix sim","profile":"p","speedup":0}}`,
			VersionInfo{Version: "x", Simulator: &SimulatorInfo{Profile: "p", Speedup: 1}}},
		{"another simulator", `{"version":"x","simulator":{"name":"other","speedup":20}}`, VersionInfo{Version: "x"}},
	}
	for _, tt := range tests {
		c, mux := setup(t)
		mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tt.body) })
		got, err := c.VersionInfo(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tt.name, d)
		}
		if v, err := c.Version(context.Background()); err != nil || v != tt.want.Version {
			t.Errorf("%s: Version() = %q, %v", tt.name, v, err)
		}
	}
}
