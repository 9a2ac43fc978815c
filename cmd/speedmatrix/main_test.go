package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// The tests measure in real time on a shared machine: a measurement the machine starved is
	// kept with a note, not measured again (bench/starve.go judges starvation in its own tests).
	os.Setenv("SPEEDMATRIX_KEEP_STARVED", "1")
	testscript.Main(m, map[string]func(){
		"speedmatrix": func() { os.Exit(mainExit()) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script; the reference report and
// golden pages from the repository's testdata/ are copied into each script's work directory.
func TestScripts(t *testing.T) {
	repoTestdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	runScripts(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Values[scriptTKey{}] = env.T() // simtime_test.go
			env.Setenv("REPO_TESTDATA", repoTestdata)
			env.Setenv("SPEEDMATRIX_KEEP_STARVED", "1") // as in TestMain
			setupGHFake(env)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"freeport": cmdFreeport,
			"waithttp": cmdWaitHTTP,
			"exitcode": exitCode,
			"ghfake":   cmdGHFake(t),
			"event":    cmdEvent,
			"gitrev":   cmdGitRev,
			"sub":      cmdSub,
			"simtime":  cmdSimTime,
		},
	})
}

// cmdFreeport is the script command `freeport NAME`: it sets $NAME to a loopback port that was
// free a moment ago, for a server started in the background (whose printed URL a script
// cannot read before it exits).
func cmdFreeport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport NAME")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ts.Check(ln.Close())
	ts.Setenv(args[0], fmt.Sprint(port))
}

// cmdGitRev is the script command `gitrev NAME DIR REV`: it sets $NAME to the full commit id
// REV names in the git repository DIR, so that a script can name the commits it made.
func cmdGitRev(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: gitrev NAME DIR REV")
	}
	cmd := exec.Command("git", "rev-parse", "--verify", args[2]+"^{commit}")
	cmd.Dir = ts.MkAbs(args[1])
	out, err := cmd.Output()
	if err != nil {
		ts.Fatalf("gitrev: git rev-parse %s in %s: %v", args[2], args[1], err)
	}
	ts.Setenv(args[0], strings.TrimSpace(string(out)))
}

// cmdSub is the script command `sub REGEXP REPLACEMENT FILE...`: it rewrites each FILE with
// every match of REGEXP (Go syntax) replaced by REPLACEMENT (as regexp.ReplaceAllString), as a
// user edits a file before giving it to speedmatrix.
func cmdSub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: sub REGEXP REPLACEMENT FILE...")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	for _, name := range args[2:] {
		p := ts.MkAbs(name)
		data, err := os.ReadFile(p)
		ts.Check(err)
		if !re.Match(data) {
			ts.Fatalf("sub: %s has no match of %s", name, args[0])
		}
		ts.Check(os.WriteFile(p, re.ReplaceAll(data, []byte(args[1])), 0o644))
	}
}

// cmdWaitHTTP is the script command `waithttp URL`: it waits up to 30 s for URL to answer
// HTTP 200.
func cmdWaitHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waithttp URL")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(args[0])
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not answer 200 within 30 s (last: %v)", args[0], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exitCode is the script command `exitcode N PROGRAM ARGS...`: it runs PROGRAM like exec, keeping
// its stdout and stderr for the next stdout and stderr checks, and fails unless it exited with N
// (0 ok, 1 error, 2 usage, 3 regression).
func exitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}
