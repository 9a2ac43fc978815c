package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestSelftestCommand(t *testing.T) {
	small := []string{"selftest", "--events", "3000", "--streams", "4", "--duration", "100ms", "--rounds", "1", "--interval", "20ms"}
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), small, &out, &errOut, func(string) string { return "" }); err != nil {
		t.Fatalf("selftest: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"token events/s per core", "4 streams, a chunk every 20ms", "1 rounds; 20 chunks bare, 20 chunks client",
		"bare os path", "client os path", "client end to end", "added (paired)", "matched (e2e − bare)", "busy per chunk, bare", "busy per chunk, client", "target p99 < 100µs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Run(context.Background(), append(small, "--json", "--burst"), &out, &errOut, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out.String())
	}
	if got["burst"] != true || got["errors"] != 0.0 || got["rounds"] != 1.0 || got["target_added_p99_us"] != 100.0 {
		t.Errorf("--json: %v", got)
	}
	for _, k := range []string{"bare_os_path", "client_os_path", "client_end_to_end", "added", "added_matched", "bare_busy_per_chunk", "client_busy_per_chunk"} {
		q, _ := got[k].(map[string]any)
		n, _ := q["n"].(float64)
		if n < 4 || (!strings.Contains(k, "busy") && n != 20) || q["p99_us"] == nil || q["max_us"] == nil {
			t.Errorf("--json %s: %v", k, got[k])
		}
	}
	if _, ok := got["targets_met"].(bool); !ok {
		t.Errorf("--json targets_met: %v", got["targets_met"])
	}
	for _, args := range [][]string{{"selftest", "--streams", "0"}, {"selftest", "--duration", "1ms", "--interval", "20ms"}, {"selftest", "--rounds", "0"},
		{"selftest", "--duration", "30ms", "--rounds", "2", "--interval", "20ms"}} {
		if err := Run(context.Background(), args, &out, &errOut, func(string) string { return "" }); ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit %d (%v), want usage error", args, ExitCode(err), err)
		}
	}
}
