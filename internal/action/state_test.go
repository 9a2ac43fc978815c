package action

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/ghbot"
)

// TestStateRoundTrip: the state line reads back as written, whatever the reason's text; no
// text can close the HTML comment that hides it.
func TestStateRoundTrip(t *testing.T) {
	st := State{Phase: phaseDone, HeadSHA: strings.Repeat("a", 40), Verdict: "regression", Regressions: []string{"decode/8K/8"},
		Accepted: &Acceptance{By: "maint", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SHA: strings.Repeat("a", 40),
			Reason: "--> <script>alert(1)</script> & `x` \n -->"}}
	line := st.Line()
	if strings.Count(line, "-->") != 1 || !strings.HasSuffix(line, " -->") || strings.Contains(line, "<script") {
		t.Fatalf("state line can be closed early: %s", line)
	}
	body := ghbot.Marker("speedmatrix") + "\n" + line + "\nmore text\n"
	got, ok := parseState(body)
	if !ok {
		t.Fatalf("parseState(%q) found nothing", body)
	}
	want := st
	want.V, want.Accepted = stateVersion, nil // comment text never accepts
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if w := withoutState("### title\n\n" + line + "\nmore text\n"); strings.Contains(w, "speedmatrix:state") || w != "### title\n\n\nmore text" {
		t.Errorf("withoutState = %q", w)
	}
	// A state line below the first two lines is quoted text, not the bot's.
	if _, ok := parseState("### title\n\n" + line + "\n"); ok {
		t.Errorf("parseState took a state line from the body's third line")
	}
	for _, bad := range []string{"no state", "<!-- speedmatrix:state {not json} -->", `<!-- speedmatrix:state {"v":9} -->`} {
		if _, ok := parseState(bad); ok {
			t.Errorf("parseState(%q) accepted it", bad)
		}
	}
	if st.AcceptedAt(strings.Repeat("b", 40)) != nil || st.AcceptedAt(strings.Repeat("a", 40)) == nil || (*State)(nil).AcceptedAt("x") != nil {
		t.Errorf("AcceptedAt holds for another commit, or not for its own")
	}
}

// TestWithAcceptance: accepting rewrites the heading and replaces an earlier acceptance block.
func TestWithAcceptance(t *testing.T) {
	body := "### 🔴 Blocked: 1 cell slower\n\nComparing …\n"
	once := withAcceptance(body, "Not blocked: accepted by a", "> **Accepted** by a")
	twice := withAcceptance(once, "Not blocked: accepted by b", "> **Accepted** by b")
	want := "### 🟢 Not blocked: accepted by b\n\n" + acceptOpen + "\n> **Accepted** by b\n" + acceptClose + "\n\nComparing …\n"
	if twice != want {
		t.Errorf("withAcceptance twice:\n%q\nwant\n%q", twice, want)
	}
}

// TestCodeSpan: user text in the page cannot open an element, mention or link.
func TestCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                  "`plain`",
		"a`b":                    "`ab`",
		"@team <b>x</b>":         "`@team <b>x</b>`",
		"line\nbreak":            "`linebreak`",
		"":                       "—",
		strings.Repeat("x", 400): "`" + strings.Repeat("x", 300) + "…`",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckStateRoundTrip: the check run's state line reads back only from the summary's
// first line; no reason can close the HTML comment.
func TestCheckStateRoundTrip(t *testing.T) {
	cs := checkState{Verdict: "regression", Accepted: &Acceptance{By: "maint", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		SHA: strings.Repeat("a", 40), Reason: "--> <!-- speedmatrix:check {} -->"}}
	line := cs.line()
	if strings.Count(line, "-->") != 1 {
		t.Fatalf("check state line can be closed early: %s", line)
	}
	got, ok := parseCheckState(line + "\n### Blocked\n")
	cs.V = checkStateVersion
	if !ok || !cmp.Equal(cs, got) {
		t.Errorf("parseCheckState = %+v, %v; want %+v", got, ok, cs)
	}
	if _, ok := parseCheckState("### Blocked\n" + line); ok {
		t.Errorf("parseCheckState took a line that is not the summary's first")
	}
}

// FuzzParseState: comment text is outside input (any workflow comments as github-actions[bot]):
// whatever it holds, parseState yields no acceptance and only canonical cells.
func FuzzParseState(f *testing.F) {
	m := ghbot.Marker("speedmatrix")
	for _, s := range []string{
		m + "\n" + `<!-- speedmatrix:state {"v":1,"phase":"done","head_sha":"` + strings.Repeat("a", 40) + `","accepted":{"by":"x","sha":"` + strings.Repeat("a", 40) + `"}} -->`,
		`<!-- speedmatrix:state {"v":1,"inconclusive":["decode/8K/1","$(id)"]} -->`,
		"x\n\n<!-- speedmatrix:state {\"v\":1} -->", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		st, ok := parseState(body)
		if !ok {
			return
		}
		if st.Accepted != nil {
			t.Fatalf("an acceptance from comment text: %+v", st.Accepted)
		}
		for _, c := range st.Inconclusive {
			if got, err := canonicalCells([]string{c}); err != nil || got[0] != c {
				t.Fatalf("cell %q is not canonical", c)
			}
		}
	})
}
