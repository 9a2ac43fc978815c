//go:build realrunner

package actrunner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// daemonMarker is in the command line of every process of the daemon-escape scenario's daemon
// and in every file it writes: the test finds them by it. The test's process id keeps two runs
// of the tier on one machine apart.
func daemonMarker() string { return "speedmatrix-daemon-escape-" + strconv.Itoa(os.Getpid()) }

// daemonScript is daemon.sh of the daemon-escape head: what a pull request's engine would leave
// behind to outlive its job, as issue 34's attacker did. Started detached (setsid) with the
// marker and the phase (build or serve), it runs until killed and, every 0.2 s: copies every
// ACTIONS_RUNTIME_TOKEN it can read in any process's environment (the measure step's own,
// actions/upload-artifact's, the report job's) into MARKER-PHASE-stolen in its working
// directory (the build's checkout, writable in the sandbox, under the runner's cache) and in
// /tmp (the host's when unconfined); and, for every RUNNER_TEMP it has read there (kept: the
// measure step that holds it may have ended), rewrites the artifact directory's results.json
// and meta.json (speedmatrix-results, the example's artifact-dir) with the marker. It
// creates its stolen files first thing, so that the test can tell it ran.
const daemonScript = `#!/bin/bash
marker=$1 phase=$2 seen=
out="$PWD/$marker-$phase-stolen" tmpout="/tmp/$marker-$phase-stolen"
: >> "$out"; : >> "$tmpout" 2>/dev/null
while :; do
  found=$(grep -a -h -o 'ACTIONS_RUNTIME_TOKEN=[^[:cntrl:]]*' /proc/[0-9]*/environ 2>/dev/null | sort -u)
  if [ -n "$found" ]; then
    printf '%s\n' "$found" >> "$out"; printf '%s\n' "$found" >> "$tmpout" 2>/dev/null
  fi
  for d in $(grep -a -h -o 'RUNNER_TEMP=[^[:cntrl:]]*' /proc/[0-9]*/environ 2>/dev/null | sort -u | cut -d= -f2-); do
    case " $seen " in *" $d "*) ;; *) seen="$seen $d";; esac
  done
  for d in $seen; do
    for f in results.json meta.json; do
      [ -f "$d/speedmatrix-results/$f" ] && printf '{"tampered": "%s"}\n' "$marker" > "$d/speedmatrix-results/$f" 2>/dev/null
    done
  done
  sleep 0.2
done
`

// daemonServe is serve.sh of the daemon-escape head: treeServe after leaving the daemon.
func daemonServe(marker string) string {
	return strings.Replace(treeServe, "exec ", fmt.Sprintf("setsid bash daemon.sh %s serve </dev/null >/dev/null 2>&1 &\nexec ", marker), 1)
}

// daemonEngineConfig is treeEngineConfig with an engine.build command, of the workspace's
// checkout (engine.source), that leaves the daemon
// (where the tree has daemon.sh: the head's, not the merge-base's of a paired run) and waits,
// bounded, for it to start: the build's end ends its sandbox.
func daemonEngineConfig(marker string) string {
	build := fmt.Sprintf(`source: .
  build: {command: "if [ -f daemon.sh ]; then setsid bash daemon.sh %[1]s build </dev/null >/dev/null 2>&1 & for i in $(seq 500); do [ -e %[1]s-build-stolen ] && break; sleep 0.01; done; fi; echo built"}`, marker)
	cfg := strings.Replace(treeEngineConfig(), "build: none", build, 1)
	if cfg == treeEngineConfig() {
		panic("treeEngineConfig has no build: none")
	}
	return cfg
}

// daemonFiles are the daemon-escape head's changes to the engine repository.
func daemonFiles(marker string) map[string]string {
	return map[string]string{"daemon.sh": daemonScript, "serve.sh": daemonServe(marker), "speedmatrix.yaml": daemonEngineConfig(marker)}
}

// runDaemonEscape is the pull request whose engine's build and server each leave a detached
// daemon (daemonScript) that tries to outlive the measure job, read a later step's
// ACTIONS_RUNTIME_TOKEN and rewrite the artifact's results.json and meta.json (issue 34,
// finding 1). After the workflow run: no process of the daemon is alive, no token was read,
// the daemon did run (its stolen file in the build's checkout), the uploaded artifact's files
// are speedmatrix's (valid results, the head's meta.json, no marker), and the verdict is an
// unchanged engine's, as for the pull request H (not blocked; the daemon's polling on a
// loaded 2-core machine may leave some cells inconclusive).
func runDaemonEscape(t *testing.T, h *harness, r *repo, file, prName string) {
	marker := daemonMarker()
	t.Cleanup(func() { killMarked(t, marker) })
	rw := h.runAct(t, r, file, "daemon-escape", asRelease(h.prEventFor(t, r, prName, 4, "X", "daemon", "B")))
	d := h.state(t)

	// No process of the daemon alive: the sandbox's PID namespace ended with its init. The
	// kernel's kills are asynchronous; act has returned long after the measure job, but poll,
	// bounded by a count.
	var alive []string
	for range 100 {
		if alive = processesWith(marker); len(alive) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(alive) > 0 {
		t.Errorf("%d process(es) of the engine's daemon outlive the workflow run:\n%s", len(alive), strings.Join(alive, "\n"))
	}

	// No token read, and the daemon ran: its stolen files, wherever the runner's machine shows them.
	stolen := stolenFiles(t, h, marker)
	phases := map[string]bool{}
	for _, f := range stolen {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("read %s: %v", f, err)
			continue
		}
		for _, p := range []string{"build", "serve"} {
			if strings.HasSuffix(f, marker+"-"+p+"-stolen") {
				phases[p] = true
			}
		}
		if bytes.Contains(data, []byte("ACTIONS_RUNTIME_TOKEN=")) {
			t.Errorf("the daemon read an ACTIONS_RUNTIME_TOKEN (%s):\n%.300s", f, data)
		}
	}
	t.Logf("the daemon's stolen files: %v", stolen)
	if !phases["build"] || !phases["serve"] {
		t.Errorf("the daemon did not run in both phases (stolen files %v): the scenario tests nothing", stolen)
	}

	// The artifact as uploaded: speedmatrix's files, not the daemon's.
	dirs, _ := filepath.Glob(filepath.Join(h.artifacts, strconv.Itoa(h.runID), "speedmatrix-*"))
	if len(dirs) != 1 {
		t.Fatalf("artifacts of run %d: %v, want one speedmatrix-SHA", h.runID, dirs)
	}
	art := dirs[0]
	_ = filepath.WalkDir(art, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(marker)) {
			t.Errorf("the uploaded %s was rewritten by the daemon: %.80q", strings.TrimPrefix(p, art+"/"), b)
		}
		return nil
	})
	if _, err := results.ReadFile(filepath.Join(art, "results.json")); err != nil {
		t.Errorf("the uploaded results.json: %v", err)
	}
	var meta struct {
		HeadSHA string `json:"head_sha"`
	}
	if b, err := os.ReadFile(filepath.Join(art, "meta.json")); err != nil {
		t.Errorf("the uploaded meta.json: %v", err)
	} else if err := json.Unmarshal(b, &meta); err != nil || meta.HeadSHA != r.sha["X"] {
		t.Errorf("the uploaded meta.json (%v): head %q, want %s\n%.300s", err, meta.HeadSHA, r.sha["X"], b)
	}

	// The verdict of an unchanged engine, as the pull request H's.
	if diff := cmp.Diff([]checkSum{{"speedmatrix", "completed", "success"}}, checksOn(d, r, r.sha["X"])); diff != "" {
		t.Errorf("checks on the daemon's head (-want +got):\n%s", diff)
	}
	if cs := botComments(d, r, 4, true); len(cs) != 1 {
		t.Errorf("%d marked comments on PR #4, want 1", len(cs))
	} else if !strings.Contains(cs[0].Body, "Not blocked") {
		// ✅ or, where the loaded machine left cells inconclusive, ⚠️: never blocked.
		t.Errorf("the comment on the daemon's head is not an unchanged engine's:\n%s", cs[0].Body)
	}
	noneInProgress(t, d, r)
	h.record(t, rw, fmt.Sprintf("success, daemon gone, %d stolen files empty", len(stolen)))
}

// stolenFiles returns the daemon's stolen files the test can see: under the scratch directory
// (the runner's HOME and cache, where the build's checkout lies; the workspace) and in /tmp.
func stolenFiles(t *testing.T, h *harness, marker string) []string {
	var out []string
	_ = filepath.WalkDir(h.scratch, func(p string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() && strings.HasPrefix(de.Name(), marker+"-") {
			out = append(out, p)
		}
		return nil
	})
	tmp, _ := filepath.Glob(filepath.Join(os.TempDir(), marker+"-*"))
	return append(out, tmp...)
}

// processesWith returns "PID cmdline" of each live (not zombie) process whose command line
// contains s.
func processesWith(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cmdline := strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
		if err != nil || !strings.Contains(cmdline, s) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		out = append(out, e.Name()+" "+cmdline)
	}
	return out
}

// killMarked kills, by process id, what is left of the scenario's daemon (only where the
// sandbox failed), and removes its files in /tmp.
func killMarked(t *testing.T, marker string) {
	for _, p := range processesWith(marker) {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		if pid > 0 && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	tmp, _ := filepath.Glob(filepath.Join(os.TempDir(), marker+"-*"))
	for _, f := range tmp {
		os.Remove(f)
	}
}
