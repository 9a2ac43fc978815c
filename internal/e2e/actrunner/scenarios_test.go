//go:build realrunner

package actrunner

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The scenarios of the two GPU examples, in order (each one's state carries to the next): a
// push stores the baseline; a pull request gets one comment and one completed check; a /bench
// from a maintainer reruns it, one from a reader is refused; a slowed head fails; an engine
// that dies ends cancelled with nothing left in_progress; an engine whose build and server
// leave a detached daemon leaves no process, no stolen token and the artifact untouched.
func runExample(t *testing.T, h *harness, file string) {
	r := h.engineRepo(t, "engine", file)
	runGPUScenarios(t, h, r, file, false)
}

// runSharded is the sharded example's push and pull request, the quick matrix's two context
// rows measured by two shards (two measure jobs) and merged into one verdict.
func runSharded(t *testing.T, h *harness, file string) {
	r := h.engineRepo(t, "engine-sharded", file)
	runGPUScenarios(t, h, r, file, true)
}

func runGPUScenarios(t *testing.T, h *harness, r *repo, file string, sharded bool) {
	prName := prEvent(t, filepath.Join(h.root, ".github", "workflows", file))
	const check = "speedmatrix"
	completed := func(conclusion string) []checkSum { return []checkSum{{check, "completed", conclusion}} }
	wantMeasureJobs := func(t *testing.T, rw row, n int) {
		t.Helper()
		got := 0
		for _, j := range rw.jobs {
			if strings.HasPrefix(j.name, "measure") {
				got++
			}
		}
		if got != n {
			t.Errorf("%d measure jobs ran, want %d", got, n)
		}
	}
	shards := 1
	if sharded {
		shards = 2
	}

	t.Run("push", func(t *testing.T) {
		rw := h.runAct(t, r, file, "push", withRelease(h.pushEvent(t, r, "B", "root"), sharded))
		d := h.state(t)
		if diff := cmp.Diff(completed("success"), checksOn(d, r, r.sha["B"])); diff != "" {
			t.Errorf("checks on the pushed commit (-want +got):\n%s", diff)
		}
		var stored []string
		for p := range d.Files[r.full] {
			if strings.Contains(p, r.sha["B"][:7]) {
				stored = append(stored, p)
			}
		}
		if len(stored) == 0 {
			t.Errorf("the data branch holds nothing of the pushed commit %s: %v", r.sha["B"][:7], keys(d.Files[r.full]))
		}
		wantMeasureJobs(t, rw, shards)
		noneInProgress(t, d, r)
		h.record(t, rw, fmt.Sprintf("baseline stored (%d files of %s)", len(stored), r.sha["B"][:7]))
	})

	t.Run("pull_request", func(t *testing.T) {
		rw := h.runAct(t, r, file, "pull_request", withRelease(h.prEventFor(t, r, prName, 1, "H", "feature", "B"), sharded))
		d := h.state(t)
		if diff := cmp.Diff(completed("success"), checksOn(d, r, r.sha["H"])); diff != "" {
			t.Errorf("checks on the head (-want +got):\n%s", diff)
		}
		cs := botComments(d, r, 1, true)
		if len(cs) != 1 {
			t.Errorf("%d marked comments on PR #1, want 1", len(cs))
		} else if !strings.Contains(cs[0].Body, r.sha["B"][:7]) {
			t.Errorf("the comment does not compare with the baseline %s:\n%s", r.sha["B"][:7], cs[0].Body)
		} else if !sharded {
			// The first pull request after the first baseline: the store cannot decide (one
			// run, store.min_history 10), so paired.mode auto (the default) measured the
			// merge-base and the head alternately in the measure job; the unchanged engine's
			// cells are decided unchanged, and the check gives the GPU time. (Sharded runs
			// measure unpaired: no runner serves both sides.)
			for _, want := range []string{"**Paired A/B** (ABBA, 4 blocks per side): the base `" + r.sha["B"][:7], "GPU time: head ", "✅ Not blocked: no slowdown beyond"} {
				if !strings.Contains(cs[0].Body, want) {
					t.Errorf("the first pull request's comment does not say %q:\n%s", want, cs[0].Body)
				}
			}
		}
		wantMeasureJobs(t, rw, shards)
		noneInProgress(t, d, r)
		h.record(t, rw, "success, 1 comment")
	})
	if sharded {
		return
	}

	t.Run("bench-maintainer", func(t *testing.T) {
		rw := h.runAct(t, r, file, "bench-maintainer", asRelease(h.commentEvent(t, r, 1, maintainer, "/bench", "B")))
		d := h.state(t)
		for _, c := range checksOn(d, r, r.sha["H"]) {
			if c != (checkSum{check, "completed", "success"}) {
				t.Errorf("check on the head after /bench: %+v, want completed success", c)
			}
		}
		if n := len(botComments(d, r, 1, true)); n != 1 {
			t.Errorf("%d marked comments on PR #1 after /bench, want 1 (edited)", n)
		}
		wantMeasureJobs(t, rw, 1)
		noneInProgress(t, d, r)
		h.record(t, rw, "rerun, success")
	})

	t.Run("bench-reader", func(t *testing.T) {
		before := len(h.state(t).State.CheckRuns)
		rw := h.runAct(t, r, file, "bench-reader", h.commentEvent(t, r, 1, reader, "/bench", "B"))
		d := h.state(t)
		ignoredComment(t, d, r, 1, h.comment)
		if after := len(d.State.CheckRuns); after != before {
			t.Errorf("a refused /bench made %d check runs", after-before)
		}
		wantMeasureJobs(t, rw, 0)
		noneInProgress(t, d, r)
		h.record(t, rw, "ignored")
	})

	t.Run("slowed-head", func(t *testing.T) {
		rw := h.runAct(t, r, file, "slowed-head", asRelease(h.prEventFor(t, r, prName, 2, "S", "slow", "B")))
		d := h.state(t)
		if diff := cmp.Diff(completed("failure"), checksOn(d, r, r.sha["S"])); diff != "" {
			t.Errorf("checks on the slowed head (-want +got):\n%s", diff)
		}
		if n := len(botComments(d, r, 2, true)); n != 1 {
			t.Errorf("%d marked comments on PR #2, want 1", n)
		}
		noneInProgress(t, d, r)
		h.record(t, rw, "failure")
	})

	t.Run("engine-dies", func(t *testing.T) {
		rw := h.runAct(t, r, file, "engine-dies", asRelease(h.prEventFor(t, r, prName, 3, "D", "dies", "B")))
		d := h.state(t)
		if diff := cmp.Diff(completed("cancelled"), checksOn(d, r, r.sha["D"])); diff != "" {
			t.Errorf("checks on the head whose engine dies (-want +got):\n%s", diff)
		}
		noneInProgress(t, d, r)
		h.record(t, rw, "cancelled")
	})

	t.Run("daemon-escape", func(t *testing.T) { runDaemonEscape(t, h, r, file, prName) }) // daemon_test.go
}

// runSelftest runs selftest.yml from a copy of this repository (uses: ./ on its checkout): a
// pull request of the repository itself, a /bench of a maintainer and one of a reader. It has
// no push and no shards.
func runSelftest(t *testing.T, h *harness, file string) {
	r := h.makeRepo(t, "speedmatrix-copy", h.root, []commitStep{
		{role: "B", branch: "main"},
		{role: "H", parent: "B", branch: "feature", files: map[string]string{"docs/selftest-change.md": "a change\n"}},
	})
	prName := prEvent(t, filepath.Join(h.root, ".github", "workflows", file))
	const check = "speedmatrix-selftest"

	t.Run("pull_request", func(t *testing.T) {
		rw := h.runAct(t, r, file, "pull_request", h.prEventFor(t, r, prName, 1, "H", "feature", "B"))
		d := h.state(t)
		if diff := cmp.Diff([]checkSum{{check, "completed", "success"}}, checksOn(d, r, r.sha["H"])); diff != "" {
			t.Errorf("checks on the head (-want +got):\n%s", diff)
		}
		if n := len(botComments(d, r, 1, true)); n != 1 {
			t.Errorf("%d marked comments on PR #1, want 1", n)
		}
		noneInProgress(t, d, r)
		h.record(t, rw, "success, 1 comment")
	})

	t.Run("bench-maintainer", func(t *testing.T) {
		rw := h.runAct(t, r, file, "bench-maintainer", h.commentEvent(t, r, 1, maintainer, "/bench", "B"))
		d := h.state(t)
		cs := checksOn(d, r, r.sha["H"])
		if len(cs) == 0 {
			t.Errorf("no check on the head after /bench")
		}
		for _, c := range cs {
			if c.Status != "completed" {
				t.Errorf("check on the head after /bench: %+v, want completed", c)
			}
		}
		noneInProgress(t, d, r)
		h.record(t, rw, "rerun")
	})

	t.Run("bench-reader", func(t *testing.T) {
		rw := h.runAct(t, r, file, "bench-reader", h.commentEvent(t, r, 1, reader, "/bench", "B"))
		d := h.state(t)
		refusedByReaction(t, d, r, 1, h.comment)
		noneInProgress(t, d, r)
		h.record(t, rw, "refused")
	})
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// asRelease runs ev with the action as a release: its binary downloaded and checked, not built
// (the measure job's build of the source, in a Go cache of its own, takes a minute of 2 cores).
func asRelease(ev event) event { return withRelease(ev, true) }

func withRelease(ev event, release bool) event {
	ev.release = release
	return ev
}
