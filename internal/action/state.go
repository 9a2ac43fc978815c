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

// State is what the bot keeps in its PR comment between events. The comment is not proof of
// anything: with GITHUB_TOKEN any workflow of the repository comments as the same
// github-actions[bot], and one that quotes pull-request text can plant a marker and a state
// line. So the comment's state only steers what a trusted command asks for (which cells a rerun
// measures, whether it is paired, which commit a cleanup completes); an acceptance and the
// verdict an acceptance needs are read from the bot's check run (checkState), never from here.
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
	// Accepted is the acceptance of the regression at Accepted.SHA, written for the reader;
	// parseState drops it (the check run holds the one that counts: checkState).
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

// parseState reads the state line of a comment body: its first line, or its second after the
// marker line that UpsertComment puts first; a state line anywhere else (quoted text) is not
// the bot's. ok is false when there is none or it does not parse. The acceptance it may hold
// is dropped: comment text never accepts a regression.
func parseState(body string) (State, bool) {
	lines := strings.SplitN(body, "\n", 3)
	if len(lines) > 2 {
		lines = lines[:2]
	}
	for _, line := range lines {
		line = strings.TrimRight(line, "\r")
		m := stateRE.FindStringSubmatch(line)
		if m == nil || m[0] != line {
			continue
		}
		var s State
		if err := json.Unmarshal([]byte(m[1]), &s); err != nil || s.V != stateVersion {
			return State{}, false
		}
		s.Accepted = nil
		var cells []string
		for _, c := range s.Inconclusive {
			if id, err := canonicalCells([]string{c}); err == nil {
				cells = append(cells, id...)
			}
		}
		s.Inconclusive = cells
		return s, true
	}
	return State{}, false
}

// checkStateVersion is the version of checkState's JSON.
const checkStateVersion = 1

// checkState is what the bot keeps in its own check run on a commit, as the first line of the
// run's summary: the verdict of the last comparison at that commit and the acceptance in force.
// Only the bot writes the output of its check runs (for an App, runs of its App id; with
// GITHUB_TOKEN, runs marked ghbot.CheckExternalID), so what this line says is trusted where
// the comment's state is not.
type checkState struct {
	V        int         `json:"v"`
	Verdict  string      `json:"verdict,omitempty"`
	Accepted *Acceptance `json:"accepted,omitempty"`
}

const checkStatePrefix = "<!-- speedmatrix:check "

var checkStateRE = regexp.MustCompile(`^<!-- speedmatrix:check (\{[^\n]*?\}) -->$`)

// line returns the hidden line that holds the check's state (encoding/json escapes <, > and &,
// so no reason can close the HTML comment).
func (s checkState) line() string {
	s.V = checkStateVersion
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return checkStatePrefix + string(b) + " -->"
}

// parseCheckState reads the state line at the start of a check run's summary; ok is false when
// the summary does not start with one.
func parseCheckState(summary string) (checkState, bool) {
	first, _, _ := strings.Cut(summary, "\n")
	m := checkStateRE.FindStringSubmatch(strings.TrimRight(first, "\r"))
	if m == nil {
		return checkState{}, false
	}
	var s checkState
	if err := json.Unmarshal([]byte(m[1]), &s); err != nil || s.V != checkStateVersion {
		return checkState{}, false
	}
	return s, true
}

// withoutState returns body without its state line.
func withoutState(body string) string {
	return strings.Trim(stateRE.ReplaceAllString(body, ""), "\n")
}
