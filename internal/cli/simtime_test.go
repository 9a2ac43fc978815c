package cli

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/memnet"
)

// runSimTime runs a command as runBench does, but inside a testing/synctest bubble over an
// in-memory network (internal/memnet): the built-in simulator and the client then share a
// fake clock that advances only while both wait, so every figure a run measures is the
// simulator's model time, exactly, whatever else the machine's cores are doing. Budgets
// (--budget, --duration, timeouts) are in that time too. The files the command writes are
// real files.
func runSimTime(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	stdout, stderr, _, err = runSimTimeTook(t, env, args...)
	return stdout, stderr, err
}

// runSimTimeTook is runSimTime that also returns how long the command took in the bubble's
// time: the run's own waits (windows, timeouts, the simulator's steps), none of the machine's.
func runSimTimeTook(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, took time.Duration, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var out, errOut bytes.Buffer
		e := &Env{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }, Net: memnet.New()}
		began := time.Now()
		err = RunEnv(t.Context(), e, args)
		took = time.Since(began)
		stdout, stderr = out.String(), errOut.String()
	})
	return stdout, stderr, took, err
}
