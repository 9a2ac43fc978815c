package cli

import (
	"bytes"
	"testing"
	"testing/synctest"

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
	synctest.Test(t, func(t *testing.T) {
		var out, errOut bytes.Buffer
		e := &Env{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }, Net: memnet.New()}
		err = RunEnv(t.Context(), e, args)
		stdout, stderr = out.String(), errOut.String()
	})
	return stdout, stderr, err
}
