package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
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
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO_TESTDATA", repoTestdata)
			return nil
		},
	})
}
