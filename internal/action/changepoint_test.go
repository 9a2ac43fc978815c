package action

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseCPState: the state line written by upsertChangePoint reads back; one whose cell,
// metric or commit is not one is refused, and cells come back canonical.
func TestParseCPState(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	good := cpState{Config: "ed738c26e8e367a9", Series: []cpSeries{{Cell: "decode/8K/8", Metric: "total_tok_per_s", First: sha, Last: sha, Before: 2, After: 1, Change: -0.5}}}
	line := func(st any) string {
		b, _ := json.Marshal(st)
		return "x\n" + changePointStatePrefix + string(b) + " -->\nbody"
	}
	got, ok := parseCPState(line(good))
	if !ok {
		t.Fatal("the state written is not read back")
	}
	if diff := cmp.Diff(good, got); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	for name, edit := range map[string]func(*cpSeries){
		"cell":   func(s *cpSeries) { s.Cell = "decode/8K/8 | <script>" },
		"metric": func(s *cpSeries) { s.Metric = "`rm -rf`" },
		"first":  func(s *cpSeries) { s.First = "main" },
		"last":   func(s *cpSeries) { s.Last = "-->" },
	} {
		bad := good
		bad.Series = []cpSeries{good.Series[0]}
		edit(&bad.Series[0])
		if _, ok := parseCPState(line(bad)); ok {
			t.Errorf("%s: a state with a forged %s is read", name, name)
		}
	}
	if _, ok := parseCPState("no state here"); ok {
		t.Errorf("a body without a state has one")
	}
}

// FuzzParseCPState: any body parses without panicking, and a state it accepts holds only
// commit ids, canonical cells and metric names, so its JSON never closes the HTML comment.
func FuzzParseCPState(f *testing.F) {
	f.Add(changePointStatePrefix + `{"config":"ed738c26e8e367a9","series":[{"cell":"decode/8K/8","metric":"total_tok_per_s","first":"0123456789abcdef0123456789abcdef01234567","before":2,"after":1,"change":-0.5}]} -->`)
	f.Add(changePointStatePrefix + `{"series":[{"cell":"prefill/16K","metric":"ttft_ms","first":"0123456789abcdef0123456789abcdef01234567"}]} -->`)
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		st, ok := parseCPState(body)
		if !ok {
			return
		}
		st.Config = "" // not read from the state
		b, err := json.Marshal(st)
		if err != nil || strings.Contains(string(b), "-->") {
			t.Errorf("accepted state %s (%v) would close the comment", b, err)
		}
	})
}
