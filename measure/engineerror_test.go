package measure

import (
	"errors"
	"fmt"
	"testing"
)

func TestEngineFailed(t *testing.T) {
	sec := &engineSecrets{}
	build := &engineError{phase: "engine.build of /src", err: errors.New("exit status 1")}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"build", build, true},
		{"through redaction and a paired block", fmt.Errorf("paired block 1 of 4 (base): %w", sec.redactError(build)), true},
		{"a failed stop joined to a measurement's error", errors.Join(errors.New("window"), &engineError{phase: "engine.serve: stopping the server", err: errors.New("killed")}), true},
		{"words alone are not a failed engine", errors.New("--config: engine.serve: command is empty"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := EngineFailed(tt.err); got != tt.want {
			t.Errorf("%s: EngineFailed(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
	if got, want := build.Error(), "engine.build of /src: exit status 1"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
