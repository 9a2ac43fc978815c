package action

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/engine"
)

// TestServerExit: a stopped run says how the server ended, from the process error the engine
// wraps under the measurement's error, whose first line alone does not say it.
func TestServerExit(t *testing.T) {
	crash := &engine.ProcessError{What: "server", Reason: "exited while serving", ExitCode: 1, Log: "/runner/results.json.server.log",
		Tail: []string{"serving", "speedmatrix: sim: stopped by the injected crash fault", ""}}
	for _, tc := range []struct {
		name  string
		cause error
		want  string
	}{
		{"exit code and the last log line", fmt.Errorf("measure ec26c3e: the server stopped answering: %w", errors.Join(errors.New("health: refused"), crash)),
			"The server exited while serving (exit code 1); the last line of its log: `speedmatrix: sim: stopped by the injected crash fault`."},
		{"killed, no log", &engine.ProcessError{What: "server", Reason: "exited while serving", ExitCode: -1, Signal: "terminated"},
			"The server exited while serving (killed by terminated)."},
		{"the build's failure is said by the error itself", &engine.ProcessError{What: "build", Reason: "failed", ExitCode: 2}, ""},
		{"no process error", errors.New("read the results: no such file"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, serverExit(tc.cause)); diff != "" {
				t.Errorf("serverExit (-want +got):\n%s", diff)
			}
		})
	}
}
