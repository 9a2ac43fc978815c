package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/errbody"
)

// Usage sources, see the package doc.
const (
	UsageContinuous = "continuous"
	UsageFinal      = "final"
	UsageChunks     = "chunks"
)

// lineReader does read lines of any length: bufio.Reader.ReadSlice, accumulating when a line is
// longer than the buffer, so a long chunk is never cut (no bufio.Scanner token limit).
type lineReader struct {
	r   *bufio.Reader
	acc []byte
}

// next does return the next line without its "\n" or "\r\n". At the end of the input it returns
// the unterminated rest (if any) with a nil error, then io.EOF.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.acc = append(l.acc[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = l.r.ReadSlice('\n')
			l.acc = append(l.acc, line...)
		}
		line = l.acc
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if err == io.EOF && len(line) == 0 {
		return nil, io.EOF
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}

// wireChunk is the part of a streamed completion chunk the client reads.
type wireChunk struct {
	Object  string          `json:"object"`
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		Text  string `json:"text"`
		Delta *struct {
			Content          string          `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			ToolCalls        json.RawMessage `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// decoder does turn SSE lines into events and keeps the token accounting of one stream. It does
// no I/O, so that the fuzz test can drive it directly.
type decoder struct {
	res     *Result
	onEvent func(Event)
	rep     RepetitionConfig

	data      []byte // data lines of the SSE event being assembled
	hasData   bool
	eventName string
	dataAt    time.Time // arrival of the first data line of the event being assembled

	done        bool      // "[DONE]" seen
	finished    bool      // a finish_reason seen
	cum         int       // tokens reported so far (continuous count or provisional chunk count)
	finalUsage  int       // largest usage.completion_tokens seen
	usageAt     time.Time // arrival of the chunk that raised finalUsage
	allContUsed bool      // every content chunk carried a positive usage count
	sawContent  bool
	tail        []byte // the end of the output text, for the repetition detector
	textBuf     []byte // reused buffer for a chunk's text
	eventsCap   int    // capacity of Result.Events when its first event arrives
}

// maxEventsPrealloc bounds the Events capacity reserved from max_tokens (40 B an event: 2.6 MB).
const maxEventsPrealloc = 1 << 16

func newDecoder(res *Result, onEvent func(Event), rep RepetitionConfig) *decoder {
	return &decoder{res: res, onEvent: onEvent, rep: rep, allContUsed: true}
}

// line does process one SSE line that arrived at time at.
func (d *decoder) line(line []byte, at time.Time) error {
	if len(line) == 0 {
		return d.dispatch()
	}
	if line[0] == ':' { // comment / keep-alive
		return nil
	}
	field, value, _ := bytes.Cut(line, []byte{':'})
	value = bytes.TrimPrefix(value, []byte{' '})
	switch string(field) {
	case "data":
		if !d.hasData {
			d.dataAt = at
		}
		if d.hasData {
			d.data = append(d.data, '\n')
		}
		d.data = append(d.data, value...)
		d.hasData = true
	case "event":
		d.eventName = string(value)
	}
	return nil
}

// dispatch does handle the SSE event assembled so far (at a blank line or the end of input),
// stamped with the arrival of its first data line.
func (d *decoder) dispatch() error {
	at := d.dataAt
	if !d.hasData {
		d.eventName = ""
		return nil
	}
	data, name := d.data, d.eventName
	d.data, d.hasData, d.eventName = d.data[:0], false, ""
	if d.done {
		return nil // anything after [DONE] is ignored
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
		d.done = true
		return nil
	}
	return d.chunk(data, name, at)
}

// chunk does account one JSON chunk.
func (d *decoder) chunk(data []byte, eventName string, at time.Time) error {
	f := chunkFields{text: d.textBuf[:0]}
	if eventName != "" || !fastScan(data, &f) {
		f = chunkFields{}
		if err := slowScan(data, eventName, &f); err != nil {
			return err
		}
	}
	d.textBuf = f.text[:0]
	text := f.text
	content := len(text) > 0 || f.toolCalls
	if f.finishReason != "" {
		d.finished = true
		d.res.FinishReason = f.finishReason
	}
	if f.hasUsage && f.promptTokens > 0 {
		d.res.PromptTokens = f.promptTokens
	}
	usage := 0
	if f.hasUsage {
		usage = f.completion
		if usage > d.finalUsage {
			d.finalUsage, d.usageAt = usage, at
		}
	}
	tokens := 0
	switch {
	case content && usage > 0:
		tokens = max(usage-d.cum, 0)
	case content:
		d.allContUsed = false
		tokens = 1
	case usage > d.cum && d.allContUsed && d.sawContent:
		// A continuous count that rose on a chunk without text (a token that decoded to nothing).
		tokens = usage - d.cum
	}
	if content {
		d.sawContent = true
		d.res.Chunks++
		d.appendTail(text)
	}
	if !content && tokens == 0 {
		return nil
	}
	d.cum += tokens
	ev := Event{At: at, Tokens: tokens, CumTokens: d.cum}
	if d.res.FirstToken.IsZero() {
		d.res.FirstToken = at
	}
	d.res.Last = at
	if evs := d.res.Events; len(evs) == cap(evs) {
		// One allocation for a stream of up to max_tokens events (the first), doubling beyond
		// that, instead of append's smaller steps that copy the slice more often on the hot
		// path; Events stays nil for a stream without output.
		d.res.Events = make([]Event, len(evs), max(2*cap(evs), d.eventsCap, 16))
		copy(d.res.Events, evs)
	}
	d.res.Events = append(d.res.Events, ev)
	if d.onEvent != nil {
		d.onEvent(ev)
	}
	return nil
}

// slowScan does decode a chunk with encoding/json: error chunks and anything the fast scanner
// leaves aside.
func slowScan(data []byte, eventName string, f *chunkFields) error {
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%w: %v in %q", ErrMalformed, err, snippet(data, 200))
	}
	if msg, isErr := chunkError(&c, eventName, data); isErr {
		return fmt.Errorf("%w: %s", ErrServerError, msg)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		f.text = append(f.text, ch.Text...)
		if ch.Delta != nil {
			f.text = append(f.text, ch.Delta.Content...)
			f.text = append(f.text, ch.Delta.ReasoningContent...)
			f.text = append(f.text, ch.Delta.Reasoning...)
			if tc := bytes.TrimSpace(ch.Delta.ToolCalls); len(tc) > 0 && !bytes.Equal(tc, []byte("null")) && !bytes.Equal(tc, []byte("[]")) {
				f.toolCalls = true
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			f.finishReason = *ch.FinishReason
		}
	}
	if c.Usage != nil {
		f.hasUsage = true
		f.promptTokens = c.Usage.PromptTokens
		f.completion = c.Usage.CompletionTokens
	}
	return nil
}

// chunkError does report whether a chunk is an error object, and its message.
func chunkError(c *wireChunk, eventName string, data []byte) (string, bool) {
	if e := bytes.TrimSpace(c.Error); len(e) > 0 && !bytes.Equal(e, []byte("null")) {
		return errbody.Message(e), true
	}
	if c.Object == "error" || eventName == "error" {
		return errbody.Message(data), true
	}
	return "", false
}

// appendTail does keep the last bytes of the output text for the repetition detector.
func (d *decoder) appendTail(text []byte) {
	if d.rep.MinRepeats <= 0 {
		return
	}
	w := d.rep.Window
	if w <= 0 {
		w = DefaultRepetition.Window
	}
	d.tail = append(d.tail, text...)
	if len(d.tail) > 2*w {
		d.tail = append(d.tail[:0], d.tail[len(d.tail)-w:]...)
	}
}

// finish does close the accounting after the body ended (eof) or "[DONE]": it settles the usage
// source and spreads a final count over the events, then checks for truncation and loops.
func (d *decoder) finish() error {
	// A last event without its blank line still counts.
	if err := d.dispatch(); err != nil {
		d.settle()
		return err
	}
	d.settle()
	if !d.done && !d.finished {
		return fmt.Errorf("%w: the body ended before [DONE] or a finish_reason after %d chunks", ErrTruncated, d.res.Chunks)
	}
	return d.loop()
}

// loop does return an ErrRepetition error when the output so far ends in a repeating loop, else
// nil. It runs when a stream ends and also when one is cut off (a window closing), since a
// stream that loops rarely ends inside a window.
func (d *decoder) loop() error {
	if r, ok := d.rep.Detect(d.tail); ok {
		return fmt.Errorf("%w: the output ends with %q repeated %d times", ErrRepetition, snippet([]byte(r.Segment), 80), r.Repeats)
	}
	return nil
}

// settle does fill the result's token totals from what arrived so far; it is also used when the
// stream failed, so that the Result is filled as far as it got.
func (d *decoder) settle() {
	res := d.res
	switch {
	case d.sawContent && d.allContUsed:
		res.UsageSource = UsageContinuous
		res.OutputTokens = d.cum
	case d.finalUsage > 0:
		res.UsageSource = UsageFinal
		res.OutputTokens = d.finalUsage
		if len(res.Events) == 0 {
			// Usage without any text (every token decoded to nothing): the tokens are known
			// to have arrived by the usage chunk.
			res.Events = append(res.Events, Event{At: d.usageAt})
			res.FirstToken, res.Last = d.usageAt, d.usageAt
		}
		spread(res.Events, d.finalUsage)
	default:
		res.UsageSource = UsageChunks
		res.OutputTokens = d.cum
	}
}

// spread does set the events' token counts so that they sum to n, evenly: event i gets
// round((i+1)·n/k) − round(i·n/k).
func spread(evs []Event, n int) {
	k := len(evs)
	if k == 0 {
		return
	}
	prev := 0
	for i := range evs {
		cum := ((i+1)*n*2 + k) / (2 * k) // round((i+1)·n/k)
		evs[i].Tokens = cum - prev
		evs[i].CumTokens = cum
		prev = cum
	}
}
