package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestExpand checks ${NAME}, $$, the $ kept as it is, and the errors, which never hold a value.
func TestExpand(t *testing.T) {
	env := lookupIn(map[string]string{"PORT": "8123", "KEY": "s3cret", "EMPTY": ""})
	for _, tc := range []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"${PORT}", "8123", ""},
		{"127.0.0.1:${PORT}", "127.0.0.1:8123", ""},
		{"--api-key=${KEY}", "--api-key=s3cret", ""},
		{"${EMPTY}x", "x", ""},
		{"$$", "$", ""},
		{"$${PORT}", "${PORT}", ""},
		{"$$$${KEY}", "$${KEY}", ""},
		{"$PORT", "$PORT", ""},
		{"a$", "a$", ""},
		{"^x$|y", "^x$|y", ""},
		{"${MISSING}", "", "${MISSING}: the variable is not set"},
		{"${PORT", "", "${ without a closing }"},
		{"${}", "", "${}: not a variable name"},
		{"${A B}", "", "${A B}: not a variable name"},
	} {
		got, err := Expand(tc.in, env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Expand(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("Expand(%q) error holds a value: %v", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestServeExpanded checks that the launch command and environment expand, that the original
// keeps its ${NAME} (so printing the configuration shows no secret), and the error's path.
func TestServeExpanded(t *testing.T) {
	s := Serve{Command: []string{"vllm", "serve", "--port", "${PORT}", "--api-key", "${KEY}"}, Env: map[string]string{"TOKEN": "${KEY}", "A": "1"}}
	got, err := s.Expanded(lookupIn(map[string]string{"PORT": "9", "KEY": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Serve{Command: []string{"vllm", "serve", "--port", "9", "--api-key", "k"}, Env: map[string]string{"TOKEN": "k", "A": "1"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Expanded (-want +got):\n%s", d)
	}
	if s.Command[5] != "${KEY}" || s.Env["TOKEN"] != "${KEY}" {
		t.Errorf("Expanded changed its receiver: %v", s)
	}
	if d := cmp.Diff([]string{"KEY", "PORT"}, s.References()); d != "" {
		t.Errorf("References (-want +got):\n%s", d)
	}
	_, err = s.Expanded(lookupIn(map[string]string{"PORT": "9"}))
	if err == nil || !strings.Contains(err.Error(), "engine.serve.command[5]: ${KEY}: the variable is not set") {
		t.Errorf("Expanded without KEY = %v, want it to name engine.serve.command[5] and KEY", err)
	}
}
