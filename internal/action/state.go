package action

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// stateVersion is the version of State's JSON.
const stateVersion = 1

// Phases of the comment's state.
const (
	phaseMeasuring = "measuring"
	phaseDone      = "done"
	phaseCancelled = "cancelled"
)

// State is what the bot keeps in its PR comment between events.
type State struct {
	V       int    `json:"v"`
	Phase   string `json:"phase"`
	HeadSHA string `json:"head_sha"`
	BaseSHA string `json:"base_sha,omitempty"`
	// Verdict is the comparison's verdict at HeadSHA ("" before one, or without a baseline).
	Verdict      string   `json:"verdict,omitempty"`
	Conclusion   string   `json:"conclusion,omitempty"`
	Regressions  []string `json:"regressions,omitempty"`
	Inconclusive []string `json:"inconclusive,omitempty"`
	// Accepted is the acceptance of the regression at Accepted.SHA; a later head voids it.
	Accepted *Acceptance `json:"accepted,omitempty"`
	RunURL   string      `json:"run_url,omitempty"`
	// Paired is set when the comparison at HeadSHA was paired: /bench rerun reruns paired.
	Paired bool `json:"paired,omitempty"`
}

// Acceptance is a maintainer's /bench accept.
type Acceptance struct {
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	SHA    string    `json:"sha"`
	Reason string    `json:"reason"`
}

// AcceptedAt returns the acceptance when it is for sha.
func (s *State) AcceptedAt(sha string) *Acceptance {
	if s == nil || s.Accepted == nil || s.Accepted.SHA != sha {
		return nil
	}
	return s.Accepted
}

const statePrefix = "<!-- speedmatrix:state "

var stateRE = regexp.MustCompile(`<!-- speedmatrix:state (\{[^\n]*?\}) -->`)

// Line returns the hidden line that holds the state. encoding/json escapes <, > and &, so the
// JSON can never close the HTML comment.
func (s State) Line() string {
	s.V = stateVersion
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return statePrefix + string(b) + " -->"
}

// parseState reads the state line of a comment body; ok is false when there is none or it does
// not parse.
func parseState(body string) (State, bool) {
	m := stateRE.FindStringSubmatch(body)
	if m == nil {
		return State{}, false
	}
	var s State
	if err := json.Unmarshal([]byte(m[1]), &s); err != nil || s.V != stateVersion {
		return State{}, false
	}
	return s, true
}

// withoutState returns body without its state line.
func withoutState(body string) string {
	return strings.Trim(stateRE.ReplaceAllString(body, ""), "\n")
}
