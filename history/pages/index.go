package pages

import (
	"bytes"
	"fmt"
	"html/template"

	"github.com/speedmatrix/speedmatrix/history"
)

// Sites renders one page per configuration, each in the folder of its config id, and an
// "index.html" that lists them: model, engine and GPU, the runs and the commits they span, the
// latest run, and how many cell-metrics hold a regression change point. A store that measured
// several configurations (another model, GPU or matrix) is one site, for GitHub Pages.
func Sites(configs []history.Config) (map[string][]byte, error) {
	site := map[string][]byte{}
	data := indexData{Title: pageTitle, Generator: pageGenerator}
	for _, c := range configs {
		if !validConfigFolder(c.ID) {
			return nil, fmt.Errorf("history site: config id %q is not a folder name", c.ID)
		}
		pages, err := Site(c.History)
		if err != nil {
			return nil, err
		}
		for name, b := range pages {
			site[c.ID+"/"+name] = b
		}
		row := indexRow{ID: c.ID, Href: c.ID + "/" + siteIndex, Runs: len(c.History.Files), Regressions: len(c.History.Regressions())}
		if n := len(c.History.Files); n > 0 {
			first, last := c.History.Files[0], c.History.Files[n-1]
			row.Setup = history.SetupLine(last)
			row.Span = fmt.Sprintf("%s … %s", history.ShortCommit(first.Engine.Commit), history.ShortCommit(last.Engine.Commit))
			row.Latest = history.DateText(last.Run.Start)
		}
		data.Configs = append(data.Configs, row)
	}
	var buf bytes.Buffer
	if err := indexTemplate.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("history site: %w", err)
	}
	site[siteIndex] = buf.Bytes()
	return site, nil
}

// SiteOf renders the site of configs: the one configuration's page at the site's root, or with
// several (or none) a page each and the index of Sites.
func SiteOf(configs []history.Config) (map[string][]byte, error) {
	if len(configs) == 1 {
		return Site(configs[0].History)
	}
	return Sites(configs)
}

// validConfigFolder reports whether id is safe as a folder name of the site (a config id is
// hex; an id from an edited index must not climb out of the site).
func validConfigFolder(id string) bool {
	return id != "" && slug(id) == id && id != "charts"
}

type indexData struct {
	Title, Generator string
	Configs          []indexRow
}

type indexRow struct {
	ID, Href, Setup, Span, Latest string
	Runs, Regressions             int
}

var indexTemplate = template.Must(template.New("index").Parse(pageHead + `<body>
<h1>{{.Title}}</h1>
{{if .Configs}}<p>{{len .Configs}} configurations. Results of different configurations (model, GPU, matrix, launch command) are never compared; each has its own page.</p>
<table>
<thead><tr><th>Configuration</th><th>Setup</th><th class="num">Runs</th><th>Commits</th><th>Latest run</th><th>Regression change points</th></tr></thead>
<tbody>
{{range .Configs}}<tr><td><a href="{{.Href}}">{{.ID}}</a></td><td>{{.Setup}}</td><td class="num">{{.Runs}}</td><td>{{.Span}}</td><td>{{.Latest}}</td><td class="num{{if .Regressions}} regression{{end}}">{{.Regressions}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p>No default-branch results are stored yet: the bot stores one on every push to the default branch, and <code>speedmatrix baseline --commit SHA</code> stores one by hand.</p>{{end}}
<p class="muted">Written by {{.Generator}}.</p>
</body>
</html>
`))
