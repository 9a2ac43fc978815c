package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/internal/numfmt"
)

// ImportTool is the tool named in imported files that do not say which tool made the report.
const ImportTool = "llm-inference-bench"

// importNote is the note every imported file carries.
const importNote = "Imported from a speed matrix report: summary numbers only, no raw samples; compare uses history or a noise prior for these cells."

// Section names of a "Speed test matrix" report.
const (
	secHardware = "hardware"
	secEngine   = "engine"
	secRun      = "run"
	secLaunch   = "launch command"
	secPrefill  = "prefill"
	secDecode   = "sustained decode"
	secAll      = "all measurements"
	secNotes    = "notes"
)

var sectionNames = []string{secHardware, secEngine, secRun, secLaunch, secPrefill, secDecode, secAll, secNotes}

// Captions that the report prints under a section heading, sometimes glued to what follows.
const (
	prefillCaption = "prompt tok/s by context length"
	partialPrefix  = "Partial results:"
)

// ImportError is a report that could not be imported: the line, and what was expected there.
type ImportError struct {
	Line int
	Msg  string
}

func (e *ImportError) Error() string {
	if e.Line <= 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

func errAt(line int, format string, args ...any) error {
	return &ImportError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// srcLine is one line of the report with its 1-based number.
type srcLine struct {
	n    int
	text string
}

// Import reads an llm-inference-bench "Speed test matrix" report — the text of its web page, or
// the same report as markdown, as `speedmatrix report` writes it — and returns a results file.
// The numbers come from the "All measurements" table; the prefill list and the decode matrix
// are checked against it. name is recorded as the file the results were imported from.
//
// What Import accepts, the page rendered from it imports back to the same file: facts keep the
// one-line form a page writes (white space folded), and what a page could not write back — a
// key with ":" or "/" or over 40 characters, a number with more digits than its column prints,
// text that is not UTF-8 — is refused with its line.
func Import(r io.Reader, name string) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize))
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	var lines []srcLine
	for i, t := range strings.Split(text, "\n") {
		if !utf8.ValidString(t) {
			// A results file is JSON, which holds text only: the bytes would not survive it.
			return nil, errAt(i+1, "this line is not UTF-8 text; save the report as UTF-8")
		}
		lines = append(lines, srcLine{n: i + 1, text: strings.TrimSpace(t)})
	}
	doc, err := splitSections(lines)
	if err != nil {
		return nil, err
	}
	f := &File{
		Schema: SchemaV1,
		Run:    Run{Source: SourceImported, ImportedFrom: name},
		Notes:  doc.notes,
	}
	f.Run.Partial, f.Run.PartialReason = doc.partial != "", doc.partial
	if err := importHardware(doc.sections[secHardware], &f.Hardware); err != nil {
		return nil, err
	}
	if err := importEngine(doc.sections[secEngine], &f.Engine); err != nil {
		return nil, err
	}
	if err := importRun(doc.sections[secRun], &f.Run); err != nil {
		return nil, err
	}
	f.Run.LaunchCommand = launchCommand(doc.sections[secLaunch])
	all, ok := doc.sections[secAll]
	if !ok {
		return nil, errAt(0, "no \"All measurements\" section: speedmatrix imports the numbers from that table")
	}
	if err := importMeasurements(all, f); err != nil {
		return nil, err
	}
	if lines, ok := doc.sections[secPrefill]; ok {
		if err := checkPrefillList(lines, f.Prefill); err != nil {
			return nil, err
		}
	}
	if lines, ok := doc.sections[secDecode]; ok {
		if err := checkDecodeMatrix(lines, f.Decode); err != nil {
			return nil, err
		}
	}
	if !containsString(f.Notes, importNote) {
		f.Notes = append(f.Notes, importNote)
	}
	if err := Validate(f); err != nil {
		return nil, fmt.Errorf("the report's numbers do not make a valid results file: %w", err)
	}
	return f, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// document is a report split into its sections.
type document struct {
	sections map[string][]srcLine
	partial  string
	notes    []string
}

// cleanHeading strips markdown heading and emphasis marks from a line.
func cleanHeading(t string) string {
	t = strings.TrimLeft(t, "#")
	t = strings.Trim(strings.TrimSpace(t), "*_")
	return strings.TrimSuffix(strings.TrimSpace(t), ":")
}

// headingOf returns the section a line opens, or "".
func headingOf(t string) string {
	if t == "" || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "|") {
		return ""
	}
	h := strings.ToLower(cleanHeading(t))
	for _, s := range sectionNames {
		if h == s {
			return s
		}
	}
	return ""
}

// isFence reports whether a line opens or closes a markdown code fence.
func isFence(t string) bool {
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// partialReason returns the reason of a "Partial results: reason" line; ok is false for any
// other line.
func partialReason(t string) (reason string, ok bool) {
	reason, ok = strings.CutPrefix(strings.Trim(t, "*> "), partialPrefix)
	return strings.TrimSpace(strings.TrimLeft(reason, "* ")), ok
}

// ProseLine returns a line of free text for a page's header (between the title and the first
// section) such that Import passes over it: s itself, or s behind a backslash where Import
// would take s for a section heading, a code fence or the "Partial results:" marker (an engine
// named "Notes", a model named ".../Run"). Markdown hides the backslash before a punctuation
// mark, which it escapes, and shows it before a letter.
func ProseLine(s string) string {
	t := strings.TrimSpace(s)
	if headingOf(t) != "" || isFence(t) {
		return `\` + s
	}
	if _, ok := partialReason(t); ok {
		return `\` + s
	}
	return s
}

// splitSections finds the title and cuts the rest into sections by their headings.
func splitSections(lines []srcLine) (*document, error) {
	doc := &document{sections: map[string][]srcLine{}}
	i := 0
	for i < len(lines) && lines[i].text == "" {
		i++
	}
	if i == len(lines) {
		return nil, errAt(0, "empty report: expected the title \"Speed test matrix\"")
	}
	if !strings.EqualFold(cleanHeading(lines[i].text), "Speed test matrix") {
		return nil, errAt(lines[i].n, "expected the title \"Speed test matrix\", found %q (is this an llm-inference-bench speed matrix report?)", clip(lines[i].text))
	}
	hasHeading := map[string]bool{}
	for _, l := range lines[i+1:] {
		if h := headingOf(l.text); h != "" {
			hasHeading[h] = true
		}
	}
	cur := ""
	fence := false
	for _, l := range lines[i+1:] {
		t := l.text
		if isFence(t) {
			fence = !fence
			continue
		}
		if !fence {
			if h := headingOf(t); h != "" {
				if _, dup := doc.sections[h]; dup {
					return nil, errAt(l.n, "a second %q section; a report has one of each", cleanHeading(t))
				}
				cur = h
				doc.sections[cur] = nil
				continue
			}
		}
		switch {
		case cur == "":
			if reason, ok := partialReason(t); ok {
				doc.partial = reason
			}
		case cur == secLaunch && !fence && !hasHeading[secPrefill] && strings.HasSuffix(t, "Prefill") && len(t) > len("Prefill"):
			// The web page's text (which has no fences) glues the next heading to the command.
			doc.sections[cur] = append(doc.sections[cur], srcLine{l.n, strings.TrimSpace(strings.TrimSuffix(t, "Prefill"))})
			cur = secPrefill
			hasHeading[secPrefill] = true
			doc.sections[cur] = nil
		case cur == secNotes:
			if note := FoldSpace(strings.TrimPrefix(t, "- ")); note != "" {
				doc.notes = append(doc.notes, note)
			}
		default:
			doc.sections[cur] = append(doc.sections[cur], l)
		}
	}
	return doc, nil
}

// clip shortens a line for an error message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// kvLine is one key and value of a Hardware, Engine or Run section.
type kvLine struct {
	n          int // the value's line
	keyN       int // the key's line
	key, value string
}

// FoldSpace folds every run of white space (Unicode's, as strings.Fields splits) into one space
// and trims both ends: the one-line form in which a page writes a fact. The importer keeps
// facts in this form, so that what it reads is what a rendered page writes back.
func FoldSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// maxKeyLen bounds a key of a "Key: value" line: a longer text before a colon is prose.
const maxKeyLen = 40

// normKey strips the emphasis and white space around a key and folds the white space within.
func normKey(k string) string {
	return FoldSpace(strings.TrimFunc(k, func(r rune) bool { return r == '*' || r == '_' || unicode.IsSpace(r) }))
}

// keyProblem says why a key, as normKey leaves it, cannot be written as "- Key: value" and
// read back by splitKV; "" when it can.
func keyProblem(k string) string {
	switch {
	case k == "":
		return "a key cannot be empty"
	case len(k) > maxKeyLen:
		return fmt.Sprintf("a key has at most %d characters", maxKeyLen)
	case strings.ContainsAny(k, ":/"):
		return `a key has no ":" or "/"`
	}
	return ""
}

// parseKV reads "Key: value" bullets, "| Key | value |" rows (a header row above a |---|---|
// separator is no fact), or the web page's alternating "- Key" / "- value" lines. Keys and
// values come out with their white space folded (FoldSpace).
func parseKV(lines []srcLine) ([]kvLine, error) {
	var out []kvLine
	pending := kvLine{}
	for i, l := range lines {
		t := l.text
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "|") {
			cells := splitRow(t)
			if len(cells) != 2 {
				return nil, errAt(l.n, "expected a row of two cells, | key | value |")
			}
			if isSeparator(cells) || cells[0] == "" || (i+1 < len(lines) && strings.HasPrefix(lines[i+1].text, "|") && isSeparator(splitRow(lines[i+1].text))) {
				continue
			}
			out = append(out, kvLine{l.n, l.n, normKey(cells[0]), FoldSpace(cells[1])})
			continue
		}
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(t, "- "), "* "))
		if pending.key != "" {
			pending.n, pending.value = l.n, FoldSpace(t)
			out = append(out, pending)
			pending = kvLine{}
			continue
		}
		if k, v, ok := splitKV(t); ok {
			out = append(out, kvLine{l.n, l.n, k, v})
			continue
		}
		pending = kvLine{n: l.n, keyN: l.n, key: normKey(t)}
	}
	if pending.key != "" {
		return nil, errAt(pending.n, "%q has no value after it", pending.key)
	}
	return out, nil
}

// splitKV splits "Key: value" (also "**Key:** value", whose value starts with the key's closing
// emphasis). A value's own emphasis ("Key: **bold**") is kept.
func splitKV(t string) (key, value string, ok bool) {
	k, v, found := strings.Cut(t, ":")
	if !found {
		return "", "", false
	}
	k = strings.TrimSpace(k)
	open := []byte(k[:len(k)-len(strings.TrimLeft(k, "*_"))])
	slices.Reverse(open)
	if closing := string(open); closing != "" && !strings.HasSuffix(k, closing) {
		v = strings.TrimPrefix(v, closing)
	}
	k, v = normKey(k), FoldSpace(v)
	if v == "" || keyProblem(k) != "" {
		return "", "", false
	}
	return k, v, true
}

// extraKV checks a fact that has no field of its own: the page writes it as "- Key: value",
// so a key that line cannot carry, or no value, is refused rather than read back as another
// fact.
func extraKV(kv kvLine) (KV, error) {
	if p := keyProblem(kv.key); p != "" {
		return KV{}, errAt(kv.keyN, "key %q: %s, so speedmatrix could not write it back; is a heading of the report mangled?", clip(kv.key), p)
	}
	if kv.value == "" {
		return KV{}, errAt(kv.n, "%q has no value", kv.key)
	}
	return KV{kv.key, kv.value}, nil
}

var vramRE = regexp.MustCompile(`^([\d.,]+)\s*GB(?:\s*\((\d+)\s*[×x]\s*([\d.,]+)\s*GB\))?$`)

// maxVRAMGB bounds the VRAM of all GPUs together: an exabyte is no machine's, and a page could
// not print a number near 10^15 in the form the importer reads.
const maxVRAMGB = 1e9

func importHardware(lines []srcLine, h *Hardware) error {
	kvs, err := parseKV(lines)
	if err != nil {
		return err
	}
	vramLine := 0
	fields := map[string]*string{"type": &h.Type, "gpu": &h.GPU, "driver": &h.Driver, "clocks": &h.Clocks, "os": &h.OS}
	for _, kv := range kvs {
		if setField(fields, kv) {
			continue
		}
		switch strings.ToLower(kv.key) {
		case "gpu count":
			n, err := ParseInt(kv.value)
			if err != nil {
				return errAt(kv.n, "GPU count: %v", err)
			}
			h.GPUCount = n
		case "vram":
			m := vramRE.FindStringSubmatch(kv.value)
			if m == nil {
				return errAt(kv.n, "VRAM %q: expected \"282 GB (2 × 141 GB)\" or \"141 GB\"", kv.value)
			}
			total, err1 := ParseNumber(m[1])
			per := total
			if m[3] != "" {
				var err2, err3 error
				per, err2 = ParseNumber(m[3])
				n, err3 := ParseInt(m[2])
				if err := errors.Join(err1, err2, err3); err != nil {
					return errAt(kv.n, "VRAM %q: %v", kv.value, err)
				}
				if h.GPUCount == 0 {
					h.GPUCount = n
				}
			} else if err1 != nil {
				return errAt(kv.n, "VRAM %q: %v", kv.value, err1)
			} else if h.GPUCount > 1 {
				per = total / float64(h.GPUCount)
			}
			h.VRAMPerGPUGB = per
			vramLine = kv.n
		default:
			kv, err := extraKV(kv)
			if err != nil {
				return err
			}
			h.Extra = append(h.Extra, kv)
		}
	}
	if total := h.VRAMPerGPUGB * float64(max(h.GPUCount, 1)); total > maxVRAMGB {
		return errAt(vramLine, "VRAM: %v GB on %d GPUs is more than %v GB; is the number in another unit?", h.VRAMPerGPUGB, max(h.GPUCount, 1), float64(maxVRAMGB))
	}
	return nil
}

func importEngine(lines []srcLine, e *Engine) error {
	kvs, err := parseKV(lines)
	if err != nil {
		return err
	}
	fields := map[string]*string{"engine": &e.Name, "version": &e.Version, "commit": &e.Commit, "quantization": &e.Quantization,
		"backend": &e.Backend, "repository": &e.Repository, "build": &e.Build}
	for _, kv := range kvs {
		if setField(fields, kv) {
			continue
		}
		x, err := extraKV(kv)
		if err != nil {
			return err
		}
		e.Extra = append(e.Extra, x)
	}
	return nil
}

// setField sets the field of fields (by lower-case key) that kv names to its value, as written,
// and reports whether there was one.
func setField(fields map[string]*string, kv kvLine) bool {
	p, ok := fields[strings.ToLower(kv.key)]
	if ok {
		*p = kv.value
	}
	return ok
}

var versionRE = regexp.MustCompile(`^(.+?)\s+(v?\d[\w.+-]*)$`)

func importRun(lines []srcLine, r *Run) error {
	kvs, err := parseKV(lines)
	if err != nil {
		return err
	}
	r.Tool = Tool{Name: ImportTool}
	fields := map[string]*string{"served model": &r.ServedModel, "revision": &r.Revision}
	for _, kv := range kvs {
		if setField(fields, kv) {
			continue
		}
		switch strings.ToLower(kv.key) {
		case "benchmark tool":
			if m := versionRE.FindStringSubmatch(kv.value); m != nil {
				r.Tool = Tool{Name: m[1], Version: m[2]}
			} else {
				r.Tool = Tool{Name: kv.value}
			}
		case "decode test":
			r.DecodeTest = ParseModeDisplay(kv.value)
		case "prefill mode":
			r.PrefillMode = ParseModeDisplay(kv.value)
		case "time per measurement":
			s, err := ParseSeconds(kv.value)
			if err != nil {
				return errAt(kv.n, "Time per measurement: %v", err)
			}
			r.SecondsPerMeasurement = s
		case "started", "finished":
			t, err := parseTime(kv.value)
			if err != nil {
				return errAt(kv.n, "%s %q: %v", kv.key, kv.value, err)
			}
			if strings.EqualFold(kv.key, "started") {
				r.Start = t
			} else {
				r.End = t
			}
		case "max output":
			n, err := ParseInt(strings.TrimSuffix(strings.TrimSpace(kv.value), " tokens"))
			if err != nil {
				return errAt(kv.n, "Max output %q: expected a token count like \"4,096 tokens\"", kv.value)
			}
			r.MaxOutputTokens = n
		default:
			kv, err := extraKV(kv)
			if err != nil {
				return err
			}
			r.Extra = append(r.Extra, kv)
		}
	}
	return nil
}

// parseTime reads a time as RFC 3339 and returns it in UTC, in whole seconds: the form a page
// writes. A time whose UTC year has no four digits is refused, as no page could write it back.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("expected a time like 2026-11-29T14:00:00Z")
	}
	t = t.UTC().Truncate(time.Second)
	if y := t.Year(); y < 0 || y > 9999 {
		return time.Time{}, fmt.Errorf("in UTC it falls in the year %d; expected a year from 0000 to 9999", y)
	}
	return t, nil
}

// launchCommand joins the section's lines, without a markdown fence.
func launchCommand(lines []srcLine) string {
	var parts []string
	for _, l := range lines {
		if l.text != "" {
			parts = append(parts, l.text)
		}
	}
	return strings.Join(parts, "\n")
}

// splitRow splits a markdown table row into its trimmed cells; "\|" is a literal bar.
func splitRow(t string) []string {
	t = strings.TrimSpace(t)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			b.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

var sepCellRE = regexp.MustCompile(`^:?-{3,}:?$`)

// isSeparator reports whether cells are a table's header separator (|---|---|).
func isSeparator(cells []string) bool {
	for _, c := range cells {
		if !sepCellRE.MatchString(c) {
			return false
		}
	}
	return true
}

// table is a markdown table found in a section.
type table struct {
	headerLine int
	header     []string
	rows       [][]string
	rowLines   []int
}

// findTable finds the table whose header starts with the cell first; the web page's text may
// glue a caption before it. It returns nil when there is none.
func findTable(lines []srcLine, first string) (*table, error) {
	marker := "| " + first + " |"
	for i, l := range lines {
		at := strings.Index(strings.ToLower(l.text), strings.ToLower(marker))
		if at < 0 {
			continue
		}
		t := &table{headerLine: l.n, header: splitRow(l.text[at:])}
		j := i + 1
		if j >= len(lines) || !strings.HasPrefix(lines[j].text, "|") || !isSeparator(splitRow(lines[j].text)) {
			return nil, errAt(l.n+1, "expected the table's separator row (|---|---|…) under its header")
		}
		for j++; j < len(lines) && strings.HasPrefix(lines[j].text, "|"); j++ {
			cells := splitRow(lines[j].text)
			if len(cells) != len(t.header) {
				return nil, errAt(lines[j].n, "this row has %d cells, the table's header has %d", len(cells), len(t.header))
			}
			t.rows = append(t.rows, cells)
			t.rowLines = append(t.rowLines, lines[j].n)
		}
		return t, nil
	}
	return nil, nil
}

// isDash reports whether a table cell says "no number".
func isDash(s string) bool {
	return s == "—" || s == "-" || s == "–" || s == ""
}

// cellParser reads the optional numbers of one table row, remembering the first error.
type cellParser struct {
	line int
	err  error
}

// num reads one number of column col, which a page prints with format. A number with more
// digits than format prints is refused: the page would print it rounded, and the next import
// would read another number.
func (p *cellParser) num(col, s string, parse func(string) (float64, error), format func(float64) string) *float64 {
	if isDash(s) || p.err != nil {
		return nil
	}
	v, err := parse(s)
	if err != nil {
		p.err = errAt(p.line, "column %q: %v", col, err)
		return nil
	}
	if printed := format(v); !readsBack(printed, v, parse) {
		p.err = errAt(p.line, "column %q: %q has more digits than a page prints (%s); round it to the report's precision", col, s, printed)
		return nil
	}
	return &v
}

// readsBack reports whether parse reads printed back as v.
func readsBack(printed string, v float64, parse func(string) (float64, error)) bool {
	w, err := parse(printed)
	return err == nil && w == v
}

func (p *cellParser) count(col, s string) *int {
	if isDash(s) || p.err != nil {
		return nil
	}
	n, err := ParseInt(s)
	if err != nil {
		p.err = errAt(p.line, "column %q: %v", col, err)
		return nil
	}
	return &n
}

// importMeasurements reads the "All measurements" table into f's cells.
func importMeasurements(lines []srcLine, f *File) error {
	t, err := findTable(lines, "Phase")
	if err != nil {
		return err
	}
	if t == nil {
		at := 0
		if len(lines) > 0 {
			at = lines[0].n
		}
		return errAt(at, "expected the All measurements table, starting with the header | Phase | Context | Requests at once | Status | …")
	}
	col := map[string]int{}
	known := map[string]bool{}
	for _, c := range measurementColumns {
		known[strings.ToLower(c)] = true
	}
	for i, h := range t.header {
		k := strings.ToLower(h)
		if !known[k] {
			return errAt(t.headerLine, "unknown column %q; the All measurements table has %s", h, strings.Join(measurementColumns, ", "))
		}
		if _, dup := col[k]; dup {
			return errAt(t.headerLine, "column %q appears twice", h)
		}
		col[k] = i
	}
	for _, need := range []string{"phase", "context", "requests at once", "status", "total tok/s"} {
		if _, ok := col[need]; !ok {
			return errAt(t.headerLine, "the All measurements table lacks the column %q", need)
		}
	}
	if len(t.rows) == 0 {
		return errAt(t.headerLine, "the All measurements table has no rows")
	}
	for r, row := range t.rows {
		line := t.rowLines[r]
		get := func(name string) string {
			if i, ok := col[name]; ok {
				return row[i]
			}
			return numfmt.Dash
		}
		label := get("context")
		ctx, err := ParseContext(label)
		if err != nil || ContextLabel(ctx) != label {
			return errAt(line, "context %q: expected a label like 8K or 1019K", label)
		}
		conc, err := strconv.Atoi(get("requests at once"))
		if err != nil || conc < 1 {
			return errAt(line, "requests at once %q: expected a positive whole number", get("requests at once"))
		}
		if strings.EqualFold(strings.TrimSpace(get("status")), NotMeasuredDisplay) {
			continue // a cell a partial run planned but did not reach: no cell
		}
		status, reason, err := parseStatusCell(get("status"))
		if err != nil {
			return errAt(line, "%v", err)
		}
		p := &cellParser{line: line}
		switch strings.ToLower(get("phase")) {
		case "prefill":
			if conc != 1 {
				return errAt(line, "a prefill row has 1 request at once, not %d", conc)
			}
			for _, name := range []string{"per request tok/s", "time between tokens", "average active requests", "output tokens", "measured for"} {
				if v := get(name); !isDash(v) {
					return errAt(line, "a prefill row has no %q (found %q); expected —", name, v)
				}
			}
			c := PrefillCell{
				Context: ctx, ContextLabel: label, Status: status, Error: reason, SummaryOnly: true,
				PromptTokPerS:     p.num("Total tok/s", get("total tok/s"), ParseNumber, numfmt.FormatTokPerS),
				TTFTMs:            p.num("TTFT", get("ttft"), ParseMillis, numfmt.FormatTTFT),
				CompletedRequests: p.count("Completed requests", get("completed requests")),
			}
			if p.err != nil {
				return p.err
			}
			f.Prefill = append(f.Prefill, c)
		case "sustained decode", "decode":
			c := DecodeCell{Context: ctx, ContextLabel: label, Concurrency: conc, Status: status, Error: reason, SummaryOnly: true}
			c.TotalTokPerS = p.num("Total tok/s", get("total tok/s"), ParseNumber, numfmt.FormatTokPerS)
			c.PerRequestTokPerS = p.num("Per request tok/s", get("per request tok/s"), ParseNumber, numfmt.FormatTokPerS)
			c.TTFTMs = p.num("TTFT", get("ttft"), ParseMillis, numfmt.FormatTTFT)
			c.TBTMs = p.num("Time between tokens", get("time between tokens"), ParseMillis, numfmt.FormatTBT)
			c.AvgActiveRequests = p.num("Average active requests", get("average active requests"), ParseNumber, numfmt.FormatOne)
			c.CompletedRequests = p.count("Completed requests", get("completed requests"))
			c.OutputTokens = p.count("Output tokens", get("output tokens"))
			c.MeasuredSeconds = p.num("Measured for", get("measured for"), ParseSeconds, numfmt.FormatSeconds)
			if p.err != nil {
				return p.err
			}
			f.Decode = append(f.Decode, c)
		default:
			return errAt(line, "phase %q: expected Prefill or Sustained decode", get("phase"))
		}
	}
	return nil
}

// parseStatusCell reads the Status column: a status name, or "Error: reason".
func parseStatusCell(s string) (Status, string, error) {
	name, reason, _ := strings.Cut(s, ":")
	st, ok := ParseStatusDisplay(name)
	if !ok {
		return "", "", fmt.Errorf("status %q: expected Valid, Requests queued, Over capacity, Error or Skipped", s)
	}
	reason = FoldSpace(reason)
	if st != StatusError && reason != "" {
		return "", "", fmt.Errorf("status %q: only an Error carries a reason", s)
	}
	if st == StatusError && reason == "" {
		reason = "error (no reason in the report)"
	}
	return st, reason, nil
}

// squash removes what differs between the web page's text and markdown (spaces, table bars,
// emphasis, line breaks) so that the two compare equal.
func squash(s string) string {
	for _, cut := range []string{"<br/>", "<br>", "<br />"} {
		s = strings.ReplaceAll(s, cut, "")
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '|', '*', '`', '·':
			return -1
		}
		return r
	}, s)
}

var leadingLabelRE = regexp.MustCompile(`^(\d+K?)`)

// checkPrefillList checks every entry of the prefill list against the cells from the table.
func checkPrefillList(lines []srcLine, cells []PrefillCell) error {
	byLabel := map[string]*PrefillCell{}
	for i := range cells {
		byLabel[cells[i].ContextLabel] = &cells[i]
	}
	seen := map[string]bool{}
	for _, l := range lines {
		t := l.text
		if rest, ok := strings.CutPrefix(strings.ToLower(t), prefillCaption); ok {
			t = t[len(t)-len(rest):]
		}
		label := ""
		if strings.HasPrefix(t, "|") {
			cells := splitRow(t)
			if isSeparator(cells) || strings.EqualFold(cells[0], "context") {
				continue
			}
			// A row's first cell is its label: squashed, "| 512 | 9,819 |" would read 5129.
			label = cells[0]
		}
		entry := squash(t)
		if entry == "" {
			continue
		}
		m := label
		if m == "" {
			m = leadingLabelRE.FindString(entry)
		}
		c := byLabel[m]
		if c == nil && notMeasuredEntry(entry, m) {
			continue
		}
		if c == nil {
			return errAt(l.n, "the prefill list has %q, which the All measurements table lacks", clip(t))
		}
		rate, ttft := c.ListText()
		want := regexp.QuoteMeta(m) + `(?:context)?` + regexp.QuoteMeta(squash(rate)) + `(?:tok/s)?` + regexp.QuoteMeta(squash(ttft)) + `(?:TTFT)?`
		if !regexp.MustCompile(`^(?i)` + want + `$`).MatchString(entry) {
			return errAt(l.n, "the prefill list says %q, but the All measurements table has %s context: %s, %s TTFT", clip(t), m, rate, ttft)
		}
		seen[m] = true
	}
	for _, c := range cells {
		if !seen[c.ContextLabel] {
			return errAt(0, "the prefill list lacks %s, which the All measurements table has", c.ContextLabel)
		}
	}
	return nil
}

// notMeasuredEntry reports whether a squashed prefill-list entry of label says the cell was not
// measured ("32KNotmeasured—", "32KcontextNotmeasured").
func notMeasuredEntry(entry, label string) bool {
	rest := strings.TrimPrefix(strings.TrimPrefix(entry, label), "context")
	want := strings.ToLower(squash(NotMeasuredDisplay))
	rest = strings.ToLower(rest)
	return label != "" && strings.HasPrefix(rest, want) && (len(rest) == len(want) || isDash(rest[len(want):]))
}

// checkDecodeMatrix checks every cell of the sustained-decode matrix against the table.
func checkDecodeMatrix(lines []srcLine, cells []DecodeCell) error {
	t, err := findTable(lines, "Context")
	if err != nil || t == nil {
		return err
	}
	conc := make([]int, len(t.header))
	for i, h := range t.header[1:] {
		n, err := strconv.Atoi(h)
		if err != nil || n < 1 {
			return errAt(t.headerLine, "decode matrix column %q: expected a number of requests", h)
		}
		conc[i+1] = n
	}
	byID := map[CellID]*DecodeCell{}
	for i := range cells {
		byID[cells[i].ID()] = &cells[i]
	}
	seen := map[CellID]bool{}
	for r, row := range t.rows {
		for i := 1; i < len(row); i++ {
			id := CellID{Phase: PhaseDecode, ContextLabel: row[0], Concurrency: conc[i]}
			c := byID[id]
			if c == nil {
				if squash(row[i]) == "" || isDash(row[i]) || strings.EqualFold(squash(row[i]), squash(NotMeasuredDisplay)) {
					continue
				}
				return errAt(t.rowLines[r], "the decode matrix has %s×%d, which the All measurements table lacks", row[0], conc[i])
			}
			want := squash(strings.Join(c.MatrixText(), ""))
			if !strings.EqualFold(squash(row[i]), want) {
				return errAt(t.rowLines[r], "the decode matrix says %q at %s×%d, but the All measurements table has %q", row[i], row[0], conc[i], strings.Join(c.MatrixText(), " "))
			}
			seen[id] = true
		}
	}
	for _, c := range cells {
		if !seen[c.ID()] {
			return errAt(t.headerLine, "the decode matrix lacks %s×%d, which the All measurements table has", c.ContextLabel, c.Concurrency)
		}
	}
	return nil
}
