package action

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	body := "### title\n\n" + line + "\nmore text\n"
	got, ok := parseState(body)
	if !ok {
		t.Fatalf("parseState(%q) found nothing", body)
	}
	st.V = stateVersion
	if d := cmp.Diff(st, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if w := withoutState(body); strings.Contains(w, "speedmatrix:state") || w != "### title\n\n\nmore text" {
		t.Errorf("withoutState = %q", w)
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
