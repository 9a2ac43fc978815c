package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestSelftestCommand(t *testing.T) {
	small := []string{"selftest", "--events", "3000", "--streams", "4", "--duration", "100ms", "--interval", "20ms"}
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), small, &out, &errOut, func(string) string { return "" }); err != nil {
		t.Fatalf("selftest: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"token events/s per core", "4 streams, a chunk every 20ms", "20 chunks", "added p50", "target p99 < 100µs"} {
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
	if got["samples"] != 20.0 || got["burst"] != true || got["errors"] != 0.0 {
		t.Errorf("--json: %v", got)
	}
	for _, args := range [][]string{{"selftest", "--streams", "0"}, {"selftest", "--duration", "1ms", "--interval", "20ms"}} {
		if err := Run(context.Background(), args, &out, &errOut, func(string) string { return "" }); ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit %d (%v), want usage error", args, ExitCode(err), err)
		}
	}
}
