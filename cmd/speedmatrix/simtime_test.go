package main

import (
	"testing"
	"testing/synctest"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/speedmatrix/speedmatrix/internal/cli"
	"github.com/speedmatrix/speedmatrix/internal/memnet"
)

// scriptT is a script's own *testing.T as testscript sees it (testscript.Run's shim does the
// same), so that a script command can open a testing/synctest bubble on it (cmdSimTime).
type scriptT struct{ *testing.T }

// Run runs f as the subtest name.
func (t scriptT) Run(name string, f func(testscript.T)) {
	t.T.Run(name, func(t *testing.T) { f(scriptT{t}) })
}

// Verbose reports whether go test runs with -v.
func (scriptT) Verbose() bool { return testing.Verbose() }

// runScripts runs the scripts of p as testscript.Run does, each on a scriptT.
func runScripts(t *testing.T, p testscript.Params) {
	if deadline, ok := t.Deadline(); ok && p.Deadline.IsZero() {
		p.Deadline = deadline
	}
	testscript.RunT(scriptT{t}, p)
}

// cmdSimTime is the script command `simtime speedmatrix ARGS...`: it runs the command in this
// process, inside a testing/synctest bubble over an in-memory network (internal/memnet), so
// that the built-in simulator and the client share a fake clock that advances only while both
// wait: what a run measures is the simulator's model time, exactly, whatever else the
// machine's cores are doing. Its stdout and stderr are kept for the next checks, as exec's;
// it fails when the command fails (with !, when it succeeds). The command's paths must be
// absolute ($WORK/...): it runs in the test's directory, not the script's.
func cmdSimTime(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || args[0] != "speedmatrix" {
		ts.Fatalf("usage: simtime speedmatrix [ARGS...]")
	}
	st, ok := ts.Value(scriptTKey{}).(scriptT)
	if !ok {
		ts.Fatalf("simtime: the script's testing.T is not in its Values (run the scripts with runScripts)")
	}
	var err error
	synctest.Test(st.T, func(t *testing.T) {
		env := &cli.Env{Stdout: ts.Stdout(), Stderr: ts.Stderr(), Getenv: ts.Getenv, Net: memnet.New()}
		err = cli.RunEnv(t.Context(), env, args[1:])
	})
	switch {
	case err != nil && !neg:
		ts.Fatalf("speedmatrix (simulator's time): %v (exit %d)", err, cli.ExitCode(err))
	case err == nil && neg:
		ts.Fatalf("speedmatrix (simulator's time) succeeded, want a failure")
	}
}

// scriptTKey is the key of a script's scriptT in its Values.
type scriptTKey struct{}
