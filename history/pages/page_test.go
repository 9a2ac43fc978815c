package pages

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/history"
	"github.com/speedmatrix/speedmatrix/history/internal/historytest"
)

// TestSite checks the page: every chart it links is in the site, every main-metric cell has
// one, the change point and the latest matrix are listed, and text from the results files is
// escaped.
func TestSite(t *testing.T) {
	files := historytest.Small()
	last := files[len(files)-1]
	last.Run.ServedModel = `<script>alert("model")</script>`
	last.Engine.Commit = `"><img src=x onerror=alert(1)>`
	h, err := history.Analyze(files, history.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	site, err := Site(h)
	if err != nil {
		t.Fatal(err)
	}
	index := string(site["index.html"])
	for _, bad := range []string{`<script>`, `<img src=x`, `http://`, `https://`} {
		if strings.Contains(index, bad) {
			t.Errorf("index.html holds %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "Latest matrix", "regression", historytest.Commit(6)[:7], "-9.9%", "prefill/8K", `<th class="num">32</th>`} {
		if !strings.Contains(index, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	charts := 0
	for name := range site {
		if strings.HasPrefix(name, "charts/") {
			charts++
			if !strings.Contains(index, `src="`+name+`"`) {
				t.Errorf("chart %s is not on the page", name)
			}
		}
	}
	if charts != 2 {
		t.Errorf("%d charts; want 2 (prefill/8K prompt tok/s, decode/8K/32 total tok/s)", charts)
	}
	if got, want := ChartName(h.Series[0]), "charts/prefill-8K-prompt_tok_per_s.svg"; got != want {
		t.Errorf("ChartName = %q; want %q", got, want)
	}
}
