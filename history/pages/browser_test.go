package pages

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/speedmatrix/speedmatrix/history"
	"github.com/speedmatrix/speedmatrix/history/internal/historytest"
)

// browser starts a headless chromium for the test and returns a context for its first tab. The
// test skips when no chromium is installed, except under CI=true, where it fails: CI must
// install it (.ci/run does).
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no chromium on PATH under CI=true: install it (apt-get install chromium; .ci/run does): %v", err)
		}
		t.Skipf("no chromium on PATH (%v): install Debian's chromium package to run the page in a real browser", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// Start the browser now, without a deadline (a deadline on the first run would stop it).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium %s: %v", path, err)
	}
	return ctx
}

// chart is what the browser says about one chart on the page.
type chart struct {
	Kind    string  `json:"kind"`
	Src     string  `json:"src"`
	Natural float64 `json:"natural"`
	W       float64 `json:"w"`
	H       float64 `json:"h"`
}

// chartsJS waits for every image to decode and reports every img and inline svg.
const chartsJS = `(async () => {
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(i => i.decode().catch(() => null)));
  const out = imgs.map(i => { const r = i.getBoundingClientRect();
    return {kind: "img", src: i.getAttribute("src") || "", natural: i.naturalWidth, w: r.width, h: r.height}; });
  for (const s of document.querySelectorAll("svg")) { const r = s.getBoundingClientRect();
    out.push({kind: "svg", src: "inline", natural: r.width, w: r.width, h: r.height}); }
  return out;
})()`

// checkPage loads url in a new tab and returns every problem: console errors, uncaught
// exceptions, browser log errors (a chart that did not load), and charts not displayed at a
// non-zero size; and the charts it saw.
func checkPage(t *testing.T, bctx context.Context, url string) ([]string, []chart) {
	t.Helper()
	tab, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	var (
		mu       sync.Mutex
		problems []string
		wg       sync.WaitGroup
	)
	listen, stopListening := context.WithCancel(tab)
	msgs := chromedp.Console(listen)
	wg.Go(func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("console %s: %s (%s)", m.Type, m.Text, m.URL))
				mu.Unlock()
			}
		}
	})
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]chart](chartsJS, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("reading the charts of %s: %v", url, err)
	}
	// Console events are delivered in order with the replies; a round trip after the checks
	// lets the last ones arrive before the listener stops.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	stopListening()
	wg.Wait()
	for _, c := range charts {
		if c.Natural <= 0 || c.W <= 0 || c.H <= 0 {
			problems = append(problems, fmt.Sprintf("chart %s %q not displayed: natural width %v, box %v × %v", c.Kind, c.Src, c.Natural, c.W, c.H))
		}
	}
	return problems, charts
}

// writeSite writes a site into a new folder and serves it.
func writeSite(t *testing.T, site map[string][]byte) (dir string, srv *httptest.Server) {
	t.Helper()
	dir = t.TempDir()
	for name, data := range site {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv = httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return dir, srv
}

// TestPageInBrowser loads the page of a 30-run synthetic history (every cell of the reference
// matrix, one row slowed) in headless chromium: it must load without a console error and show
// every chart at a non-zero size. The same check must catch a page that is broken on purpose.
func TestPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	bctx := browser(t)
	h, err := history.Analyze(historytest.Synthetic(t, 30, 15, "8K"), history.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	site, err := Site(h)
	if err != nil {
		t.Fatal(err)
	}
	want := len(site) - 1
	dir, srv := writeSite(t, site)

	problems, charts := checkPage(t, bctx, srv.URL+"/index.html")
	for _, p := range problems {
		t.Error(p)
	}
	if len(charts) != want {
		t.Errorf("the browser saw %d charts; the site has %d", len(charts), want)
	}
	t.Logf("index.html: %d charts displayed, %d problems", len(charts), len(problems))

	// The check must be able to fail: a page with a console error, an exception and a chart
	// whose file is missing.
	broken := `<!DOCTYPE html><html><head><title>broken</title></head><body>
<img src="charts/missing.svg" width="10" height="10" alt="missing">
<script>console.error("boom"); throw new Error("thrown");</script></body></html>`
	if err := os.WriteFile(filepath.Join(dir, "broken.html"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, _ = checkPage(t, bctx, srv.URL+"/broken.html")
	all := strings.Join(problems, "\n")
	for _, want := range []string{"console error: boom", "thrown", "missing.svg", "not displayed"} {
		if !strings.Contains(all, want) {
			t.Errorf("broken page: problems lack %q; got:\n%s", want, all)
		}
	}
}

// TestSitesInBrowser loads the index of a site of two configurations in headless chromium and
// follows each of its links: the index and every configuration's page load without a problem,
// and every page shows all its charts.
func TestSitesInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	bctx := browser(t)
	var configs []history.Config
	for i, id := range []string{"0a1b2c3d4e5f6a7b", "9f8e7d6c5b4a3f2e"} {
		h, err := history.Analyze(historytest.Synthetic(t, 12, 6+i, "16K"), history.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		configs = append(configs, history.Config{ID: id, History: h})
	}
	site, err := Sites(configs)
	if err != nil {
		t.Fatal(err)
	}
	_, srv := writeSite(t, site)
	problems, _ := checkPage(t, bctx, srv.URL+"/index.html")
	for _, p := range problems {
		t.Errorf("index.html: %s", p)
	}
	tab, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/index.html")); err != nil {
		t.Fatal(err)
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a")).map(a => a.href)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != len(configs) {
		t.Fatalf("the index links %v; want one page per configuration", links)
	}
	for i, link := range links {
		want := 0
		for name := range site {
			if strings.HasPrefix(name, configs[i].ID+"/charts/") {
				want++
			}
		}
		problems, charts := checkPage(t, bctx, link)
		for _, p := range problems {
			t.Errorf("%s: %s", link, p)
		}
		if want == 0 || len(charts) != want {
			t.Errorf("%s: the browser saw %d charts; the site has %d", link, len(charts), want)
		}
		t.Logf("%s: %d charts displayed, %d problems", link, len(charts), len(problems))
	}
}
