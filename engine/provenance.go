package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Provenance says which engine a measurement ran against and how it was started.
type Provenance struct {
	Engine    string   `json:"engine"`               // "vllm"
	Version   string   `json:"version,omitempty"`    // what GET /version answered
	Commit    string   `json:"commit,omitempty"`     // the commit built
	MergeBase string   `json:"merge_base,omitempty"` // its merge-base with main
	BuildMode Mode     `json:"build_mode,omitempty"`
	Command   []string `json:"command,omitempty"` // the launch command as run: redact before writing
}

// Provenance returns what is known of the server and its build (bd may be nil).
func (s *Server) Provenance(ctx context.Context, bd *Build) Provenance {
	p := Provenance{Engine: "vllm", Command: s.Argv()}
	if bd != nil {
		p.Engine, p.Commit, p.MergeBase, p.BuildMode = bd.Engine, bd.Commit, bd.MergeBase, bd.Mode
	}
	if v, err := s.Version(ctx); err == nil {
		p.Version = v
	}
	return p
}

// Version asks the server's GET /version (vLLM answers {"version": "0.11.1"}).
func (s *Server) Version(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	code, body, err := get(ctx, http.DefaultClient, s.url+"/version", s.spec.APIKey)
	if err != nil {
		return "", fmt.Errorf("engine version: %w", err)
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("engine version: GET /version answered %d", code)
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("engine version: %w", err)
	}
	return v.Version, nil
}
