package ghtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Dispatch is a workflow_dispatch event the fake was asked to create (POST
// /repos/{o}/{r}/actions/workflows/{workflow}/dispatches): the workflow (its file name or id),
// the ref, the inputs and who asked. The fake runs nothing: a test that plays GitHub starts the
// run itself (the real-runner test runs act with the event).
type Dispatch struct {
	Repo     string            `json:"repo"`
	Workflow string            `json:"workflow"`
	Ref      string            `json:"ref"`
	Inputs   map[string]string `json:"inputs,omitempty"`
	Login    string            `json:"login"`
	At       time.Time         `json:"at"`
}

// createDispatch records a workflow_dispatch event as GitHub accepts one: 204 for a repository
// it knows and a ref that is a branch of it (refs/heads/X or X; 422 "No ref found" otherwise,
// when the repository has refs); inputs must be strings (422 otherwise).
func (h *handler) createDispatch(repo, workflow string) {
	if _, ok := h.s.repos[repo]; !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	var req struct {
		Ref    string         `json:"ref"`
		Inputs map[string]any `json:"inputs"`
	}
	if err := json.Unmarshal(h.body, &req); err != nil || req.Ref == "" {
		writeError(h.w, http.StatusUnprocessableEntity, "Invalid request: a ref is required")
		return
	}
	branch := strings.TrimPrefix(req.Ref, "refs/heads/")
	if g := h.s.gitRepos[repo]; g != nil && len(g.refs) > 0 && g.refs["heads/"+branch] == "" {
		writeError(h.w, http.StatusUnprocessableEntity, "No ref found for: "+req.Ref)
		return
	}
	d := Dispatch{Repo: repo, Workflow: workflow, Ref: req.Ref, Login: h.who.login, At: h.s.now()}
	for k, v := range req.Inputs {
		s, ok := v.(string)
		if !ok {
			writeError(h.w, http.StatusUnprocessableEntity, "Invalid request: input "+k+" is not a string")
			return
		}
		if d.Inputs == nil {
			d.Inputs = map[string]string{}
		}
		d.Inputs[k] = s
	}
	h.s.dispatches = append(h.s.dispatches, d)
	h.w.WriteHeader(http.StatusNoContent)
}
