package action

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"

	"github.com/speedmatrix/speedmatrix/bisect"
)

// TestReadBisectInputs: bisect is a comment id in mode decide (the workflow_dispatch input) and
// ID/ROUND in mode report (decide's output), nothing else and in no other mode; bisect-artifacts
// only with it, in report.
func TestReadBisectInputs(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want bisectInput
		arts string
		err  string
	}{
		{env: map[string]string{"INPUT_MODE": "decide", "INPUT_BISECT": "2061234567"}, want: bisectInput{ID: 2061234567}},
		{env: map[string]string{"INPUT_MODE": "report", "INPUT_BISECT": "2061234567/3", "INPUT_BISECT-ARTIFACTS": "b/speedmatrix-bisect-*"}, want: bisectInput{ID: 2061234567, Round: 3}, arts: "b/speedmatrix-bisect-*"},
		{env: map[string]string{"INPUT_MODE": "decide"}},
		{env: map[string]string{"INPUT_MODE": "decide", "INPUT_BISECT": "12/3"}, err: "not ID/ROUND"},
		{env: map[string]string{"INPUT_MODE": "report", "INPUT_BISECT": "12"}, err: "ID/ROUND"},
		{env: map[string]string{"INPUT_MODE": "measure", "INPUT_BISECT": "12"}, err: "for modes decide and report"},
		{env: map[string]string{"INPUT_MODE": "decide", "INPUT_BISECT": "12; id"}, err: "is not a bisection"},
		{env: map[string]string{"INPUT_MODE": "decide", "INPUT_BISECT": "0"}, err: "is not a bisection"},
		{env: map[string]string{"INPUT_MODE": "report", "INPUT_BISECT-ARTIFACTS": "x"}, err: "needs the bisect input"},
		{env: map[string]string{"INPUT_MODE": "report", "INPUT_BISECT": "1/1", "INPUT_BISECT-ARTIFACTS": "a\nb"}, err: "line break"},
	} {
		a := githubactions.New(githubactions.WithGetenv(func(k string) string { return tt.env[k] }))
		in, err := readInputs(a, "")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want one saying %q", tt.env, err, tt.err)
			}
			continue
		}
		if err != nil || in.Bisect != tt.want || in.BisectArtifacts != tt.arts {
			t.Errorf("%v: %+v %q, %v; want %+v %q", tt.env, in.Bisect, in.BisectArtifacts, err, tt.want, tt.arts)
		}
	}
}

var (
	shaG = strings.Repeat("a", 40)
	shaB = strings.Repeat("b", 40)
	shaM = strings.Repeat("c", 40)
)

func testRecord() bisectRecord {
	return bisectRecord{Issue: 3, Config: "ed738c26e8e367a9", Good: shaG, Bad: shaB, Base: shaG, Cells: []string{"decode/8K/8"}, Runners: 4, Steps: 12,
		Rounds: []recordRound{{Steps: []recordStep{{Measurement: bisect.Measurement{Commit: shaM, Verdict: bisect.Good, Reason: "unchanged", Attempt: 1}, Run: "bisect-7-1"}}}}}
}

// TestBisectRecord: a record reads back as written from its comment, and a line whose values
// this package could not have made (edited by hand, or by another workflow of the same token)
// is no record.
func TestBisectRecord(t *testing.T) {
	r := testRecord()
	body := bisectMarker + "\n" + r.line() + "\nthe rest"
	got, ok := parseBisectRecord(body)
	if !ok {
		t.Fatalf("the record does not read back:\n%s", body)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}
	for name, edit := range map[string]func(*bisectRecord){
		"a branch for a commit": func(r *bisectRecord) { r.Bad = "main" },
		"a cell not canonical":  func(r *bisectRecord) { r.Cells = []string{"decode/8k/8"} },
		"a command for a cell":  func(r *bisectRecord) { r.Cells = []string{"$(id)"} },
		"one runner":            func(r *bisectRecord) { r.Runners = 1 },
		"a round too wide": func(r *bisectRecord) {
			r.Runners = 2
			r.Rounds[0].Steps = append(r.Rounds[0].Steps, r.Rounds[0].Steps[0])
		},
		"an unknown verdict": func(r *bisectRecord) { r.Rounds[0].Steps[0].Verdict = "culprit" },
		"a run id of a path": func(r *bisectRecord) { r.Rounds[0].Steps[0].Run = "../results/x" },
		"no attempt":         func(r *bisectRecord) { r.Rounds[0].Steps[0].Attempt = 0 },
		"good is bad":        func(r *bisectRecord) { r.Good = r.Bad },
		"a long reason":      func(r *bisectRecord) { r.Rounds[0].Steps[0].Reason = strings.Repeat("x", maxRecordReason+1) },
	} {
		r := testRecord()
		edit(&r)
		if _, ok := parseBisectRecord(bisectMarker + "\n" + r.line()); ok {
			t.Errorf("%s: read as a record", name)
		}
	}
	if _, ok := parseBisectRecord(bisectStatePrefix + `{"issue":3,"extra":1} -->`); ok {
		t.Error("a record with an unknown field")
	}
}

// TestRecordReplays: a record's rounds replay through bisect.Next as the rounds they were.
func TestRecordReplays(t *testing.T) {
	r := testRecord()
	r.Rounds = nil
	commits := []string{strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 40), shaB}
	req, _, err := bisect.Next(context.Background(), r.config(commits), r.recorded())
	if err != nil || req == nil || len(req.Commits) != 3 {
		t.Fatalf("the first round: %+v, %v; want 3 commits (4 runners, the range's total unknown: the bad commit among them)", req, err)
	}
	var steps []recordStep
	for _, c := range req.Commits {
		v := bisect.Good
		if c == shaB || c == commits[2] {
			v = bisect.Bad
		}
		steps = append(steps, recordStep{Measurement: bisect.Measurement{Commit: c, Verdict: v, Attempt: req.Attempt[c], Change: &bisect.Change{Change: -0.1, Low: -0.11, High: -0.09}}})
	}
	r.Rounds = append(r.Rounds, recordRound{Search: req.Search, Steps: steps})
	b, _ := json.Marshal(r)
	var back bisectRecord
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	req, res, err := bisect.Next(context.Background(), back.config(commits), back.recorded())
	if err != nil || req != nil || len(res.Regressions) != 1 || res.Regressions[0].Culprit != commits[2] {
		t.Errorf("after the recorded round: next %+v, result %+v, %v; want the culprit %s", req, res, err, commits[2][:7])
	}
}

// FuzzParseBisectRecord: whatever a comment holds, a record read from it holds only values this
// package makes, and writes back a line that cannot close the HTML comment early.
func FuzzParseBisectRecord(f *testing.F) {
	f.Add(bisectMarker + "\n" + testRecord().line())
	f.Add(bisectStatePrefix + `{"issue":1,"config":"ed738c26e8e367a9","cells":["decode/8K/8 -->"]} -->`)
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		r, ok := parseBisectRecord(body)
		if !ok {
			return
		}
		if !r.valid() {
			t.Fatalf("an invalid record accepted: %+v", r)
		}
		line := r.line()
		if strings.Count(line, "-->") != 1 || !strings.HasSuffix(line, " -->") {
			t.Fatalf("the record's line closes the comment early: %s", line)
		}
		back, ok := parseBisectRecord(line)
		if !ok || !cmp.Equal(r, back) {
			t.Fatalf("the record does not read back from its own line: %s", line)
		}
	})
}
