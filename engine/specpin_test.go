package engine

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPinAcceptance: pinned mode rewrites the serve command's --speculative-config in every
// layout a launch command has (two arguments, one with =, inside a bash -c line bare, single-
// or double-quoted, absent), keeping the other keys and replacing synthetic rates; what it
// cannot rewrite is an error.
func TestPinAcceptance(t *testing.T) {
	const pinned = `"rejection_sample_method":"synthetic","synthetic_acceptance_length":3.12`
	for _, tc := range []struct {
		name string
		argv []string
		want []string
		err  string
	}{
		{
			name: "two arguments",
			argv: []string{"vllm", "serve", "m", "--speculative-config", `{"method":"mtp","num_speculative_tokens":3}`, "--port", "${PORT}"},
			want: []string{"vllm", "serve", "m", "--speculative-config", `{"method":"mtp","num_speculative_tokens":3,` + pinned + `}`, "--port", "${PORT}"},
		},
		{
			name: "one argument with =",
			argv: []string{"vllm", "serve", "m", `--speculative-config={"model":"org/draft-${REV}","num_speculative_tokens":7}`},
			want: []string{"vllm", "serve", "m", `--speculative-config={"model":"org/draft-${REV}","num_speculative_tokens":7,` + pinned + `}`},
		},
		{
			name: "already synthetic, by rates",
			argv: []string{"vllm", "serve", "m", "--speculative-config", `{"method":"eagle3","rejection_sample_method":"synthetic","synthetic_acceptance_rates":[0.9,0.7]}`},
			want: []string{"vllm", "serve", "m", "--speculative-config", `{"method":"eagle3",` + pinned + `}`},
		},
		{
			name: "none: appended",
			argv: []string{"speedmatrix", "sim", "--listen", "127.0.0.1:${PORT}"},
			want: []string{"speedmatrix", "sim", "--listen", "127.0.0.1:${PORT}", "--speculative-config", `{` + pinned + `}`},
		},
		{
			name: "single-quoted in a shell line",
			argv: []string{"bash", "-c", `exec vllm serve m --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' --port $PORT`},
			want: []string{"bash", "-c", `exec vllm serve m --speculative-config '{"method":"mtp","num_speculative_tokens":3,` + pinned + `}' --port $PORT`},
		},
		{
			name: "double-quoted in a shell line",
			argv: []string{"bash", "-c", `vllm serve m --speculative-config "{\"method\":\"mtp\",\"num_speculative_tokens\":3}"`},
			want: []string{"bash", "-c", `vllm serve m --speculative-config "{\"method\":\"mtp\",\"num_speculative_tokens\":3,\"rejection_sample_method\":\"synthetic\",\"synthetic_acceptance_length\":3.12}"`},
		},
		{
			name: "bare with = in a shell line",
			argv: []string{"sh", "-c", `vllm serve m --speculative-config={"num_speculative_tokens":3} && true`},
			want: []string{"sh", "-c", `vllm serve m --speculative-config='{"num_speculative_tokens":3,` + pinned + `}' && true`},
		},
		{name: "not JSON", argv: []string{"vllm", "serve", "--speculative-config", `{"num_speculative_tokens": ${N}}`}, err: "not a JSON object"},
		{name: "flag without a value", argv: []string{"vllm", "serve", "--speculative-config"}, err: "last argument"},
		{name: "unclosed quote", argv: []string{"bash", "-c", `vllm serve --speculative-config '{"a":1}`}, err: "unclosed single quote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := append([]string(nil), tc.argv...)
			got, err := PinAcceptance(tc.argv, 3.12)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(orig, tc.argv); diff != "" {
				t.Errorf("the input was changed:\n%s", diff)
			}
		})
	}
	if _, err := PinAcceptance([]string{"vllm"}, 0.5); err == nil {
		t.Error("a length below 1 was accepted")
	}
}

// TestPinAcceptanceShellRoundTrip: the value rewritten inside a double-quoted shell line is
// what the shell hands the program.
func TestPinAcceptanceShellRoundTrip(t *testing.T) {
	got, err := PinAcceptance([]string{"bash", "-c", `printf '%s\n' --speculative-config "{\"model\":\"a\$b\"}"`}, 2.5)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(got[0], got[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "--speculative-config\n" + `{"model":"a$b","rejection_sample_method":"synthetic","synthetic_acceptance_length":2.5}` + "\n"; string(out) != want {
		t.Errorf("the shell handed the program %q, want %q", out, want)
	}
}
