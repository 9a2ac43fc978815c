package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/results"
)

// Markdown writes the page as GitHub-flavoured markdown: the layout of the reference report, with
// proper tables. `speedmatrix import` reads it back.
func (p *Page) Markdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	line := func(s ...string) {
		for _, x := range s {
			b.WriteString(x)
		}
		b.WriteByte('\n')
	}
	// statusLegend follows each table with statuses: what they mean, and the cells not measured.
	statusLegend := func() {
		line(legendStatus)
		line()
		if p.NotMeasured != "" {
			line(p.NotMeasured)
			line()
		}
	}
	line("# ", p.Title)
	line()
	// The header's lines carry names from the file (model, engine): results.ProseLine keeps
	// `speedmatrix import` from reading one as a heading, a fence or the partial marker.
	if p.Subtitle != "" {
		line(results.ProseLine("**" + p.Subtitle + "**"))
		line()
	}
	for _, s := range []string{p.EngineLine, p.MatrixLine, p.TimeScale} {
		if s != "" {
			line(results.ProseLine(s))
			line()
		}
	}
	if p.Partial != "" {
		line("> **Partial results:** ", p.Partial)
		line()
	}
	for _, sec := range []struct {
		name string
		kvs  []results.KV
	}{{"Hardware", p.Hardware}, {"Engine", p.Engine}, {"Run", p.Run}} {
		if len(sec.kvs) == 0 {
			continue
		}
		line("## ", sec.name)
		line()
		for _, kv := range sec.kvs {
			line("- ", kv.Key, ": ", oneLine(kv.Value))
		}
		line()
	}
	if p.LaunchCommand != "" {
		line("## Launch command")
		line()
		line("```sh")
		line(p.LaunchCommand)
		line("```")
		line()
	}
	if len(p.Prefill) > 0 {
		line("## Prefill")
		line()
		line(prefillCaption)
		line()
		line("| Context | Prompt tok/s | TTFT |")
		line("|---|---|---|")
		for _, r := range p.Prefill {
			line("| ", r.Context, " | ", cell(r.TokPerS), " | ", r.TTFT, " |")
		}
		line()
	}
	if len(p.Decode.Rows) > 0 {
		line("## Sustained decode")
		line()
		line(decodeCaption)
		line()
		head := []string{"Context"}
		for _, c := range p.Decode.Concurrency {
			head = append(head, strconv.Itoa(c))
		}
		line(tableRow(head))
		line(separator(len(head)))
		for _, r := range p.Decode.Rows {
			row := []string{r.Context}
			for _, c := range r.Cells {
				row = append(row, strings.Join(c, "<br>"))
			}
			line(tableRow(row))
		}
		line()
		statusLegend()
		line(legendTTFT)
		line()
	}
	if len(p.Measurements) > 0 {
		line("## All measurements")
		line()
		line(allCaption)
		line()
		line(tableRow(p.Columns))
		line(separator(len(p.Columns)))
		for _, r := range p.Measurements {
			line(tableRow(r))
		}
		line()
		statusLegend()
	}
	if len(p.Notes) > 0 {
		line("## Notes")
		line()
		for _, n := range p.Notes {
			line("- ", oneLine(n))
		}
		line()
	}
	return b.Flush()
}

// JSON writes the page as indented JSON.
func (p *Page) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// oneLine folds a value onto one line, as the importer keeps it (results.FoldSpace).
func oneLine(s string) string {
	return results.FoldSpace(s)
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

func tableRow(cells []string) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" ")
		b.WriteString(cell(c))
		b.WriteString(" |")
	}
	return b.String()
}

func separator(n int) string {
	return "|" + strings.Repeat("---|", n)
}

// csvColumns are the machine-readable columns of the CSV rendering.
var csvColumns = []string{
	"phase", "context", "context_label", "concurrency", "status", "error", "total_tok_per_s",
	"per_request_tok_per_s", "ttft_ms", "tbt_ms", "avg_active_requests", "completed_requests",
	"output_tokens", "measured_seconds", "time_scale",
}

// CSV writes every cell of f as one CSV row with unformatted numbers (empty where null), for
// spreadsheets and scripts. The numbers are as measured; time_scale is the simulator's speedup
// (1 for a real server): divide rates and multiply times by it for the profile's time.
func CSV(w io.Writer, f *results.File) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns); err != nil {
		return err
	}
	num := func(p *float64) string {
		if p == nil {
			return ""
		}
		return numfmt.Plain(*p)
	}
	count := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	scale := strconv.FormatFloat(f.TimeScale(), 'f', -1, 64)
	for _, c := range f.Prefill {
		cw.Write([]string{string(results.PhasePrefill), strconv.Itoa(c.Context), c.ContextLabel, "1", string(c.Status), c.Error,
			num(c.PromptTokPerS), "", num(c.TTFTMs), "", "", count(c.CompletedRequests), "", "", scale})
	}
	for _, c := range f.Decode {
		cw.Write([]string{string(results.PhaseDecode), strconv.Itoa(c.Context), c.ContextLabel, strconv.Itoa(c.Concurrency), string(c.Status), c.Error,
			num(c.TotalTokPerS), num(c.PerRequestTokPerS), num(c.TTFTMs), num(c.TBTMs), num(c.AvgActiveRequests),
			count(c.CompletedRequests), count(c.OutputTokens), num(c.MeasuredSeconds), scale})
	}
	cw.Flush()
	return cw.Error()
}
