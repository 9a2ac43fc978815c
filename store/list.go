package store

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteList writes entries as store list prints them: a table (time, kind, pull request, commit,
// config id, run id, path), or, with asJSON, a JSON array.
func WriteList(w io.Writer, es []Entry, asJSON bool) error {
	if asJSON {
		if es == nil {
			es = []Entry{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(es)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tKIND\tPR\tCOMMIT\tCONFIG\tRUN\tPATH")
	for _, e := range es {
		pr := ""
		if e.PR > 0 {
			pr = fmt.Sprint(e.PR)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.UTC().Format(time.RFC3339), e.Kind, pr, e.Commit[:min(12, len(e.Commit))], e.ConfigID, e.RunID, e.Path)
	}
	return tw.Flush()
}
