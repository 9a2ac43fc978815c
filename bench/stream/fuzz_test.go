package stream

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzDecoder drives the SSE line reader and chunk decoder with arbitrary bodies: it must never
// panic, and a stream it accepts must be consistently accounted.
func FuzzDecoder(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(capturesDir, "*", "*.sse"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add(vllmContinuous([]int{1, 3, 2}, 0))
	f.Add([]byte("data: {\"error\":{\"message\":\"x\"}}\n\n"))
	f.Add([]byte("event: error\r\ndata: \"bad\"\r\n\r\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{}]}}],\"usage\":{\"completion_tokens\":-3}}\n\ndata: [DONE]\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var res Result
		d := newDecoder(&res, nil, DefaultRepetition)
		lr := &lineReader{r: bufio.NewReaderSize(bytes.NewReader(body), 16)}
		at := time.Unix(0, 0)
		var err error
		for !d.done {
			line, rerr := lr.next()
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				t.Fatalf("reading from memory failed: %v", rerr)
			}
			at = at.Add(time.Millisecond)
			if err = d.line(line, at); err != nil {
				break
			}
		}
		if err == nil {
			err = d.finish()
		} else {
			d.settle()
		}
		if res.Chunks > len(res.Events) {
			t.Errorf("%d content chunks but %d events", res.Chunks, len(res.Events))
		}
		if err != nil {
			return
		}
		sum := 0
		for i, ev := range res.Events {
			if ev.Tokens < 0 {
				t.Errorf("event %d has %d tokens", i, ev.Tokens)
			}
			sum += ev.Tokens
			if ev.CumTokens != sum {
				t.Errorf("event %d: CumTokens %d, running sum %d", i, ev.CumTokens, sum)
			}
		}
		if sum != res.OutputTokens {
			t.Errorf("events sum to %d, OutputTokens %d (source %s)", sum, res.OutputTokens, res.UsageSource)
		}
	})
}

// FuzzRepetition checks that the detector never panics and that what it reports is true.
func FuzzRepetition(f *testing.F) {
	f.Add([]byte("abc"), 3, 100)
	f.Add([]byte("the cat sat. "), 1, 30)
	f.Fuzz(func(t *testing.T, seg []byte, pre, n int) {
		if n < 0 || n > 2000 || pre < 0 || pre > 100 {
			return
		}
		out := append(bytes.Repeat([]byte("x"), pre), bytes.Repeat(seg, n)...)
		r, ok := DefaultRepetition.Detect(out)
		if !ok {
			return
		}
		s := []byte(r.Segment)
		if !bytes.HasSuffix(out, bytes.Repeat(s, r.Repeats)) || r.Repeats < DefaultRepetition.MinRepeats {
			t.Errorf("reported %q ×%d is not the end of the output", r.Segment, r.Repeats)
		}
	})
}

// FuzzFastScan checks that the fast chunk scanner agrees with encoding/json on every chunk it
// accepts (chunks with a repeated key are skipped: encoding/json's merging of duplicates is not
// worth imitating).
func FuzzFastScan(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(capturesDir, "*", "*.sse"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				f.Add(d)
			}
		}
	}
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"id":"x"}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":12}}`))
	f.Add([]byte(`{"choices":[{"text":"a\u00e9\"b","finish_reason":null}],"usage":null,"x":[1,-2.5e3,true,false,{}]}`))
	f.Add([]byte("{\"choices\":[{\"finish_reason\":\"\xffength\"}]}")) // invalid UTF-8: encoding/json gives U+FFFD
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range []string{`"choices"`, `"usage"`, `"delta"`, `"text"`, `"finish_reason"`, `"prompt_tokens"`, `"completion_tokens"`, `"content"`, `"reasoning"`, `"reasoning_content"`, `"tool_calls"`} {
			if bytes.Count(data, []byte(k)) > 1 {
				return
			}
		}
		var fast chunkFields
		if !fastScan(data, &fast) {
			return
		}
		var slow chunkFields
		if err := slowScan(data, "", &slow); err != nil {
			t.Fatalf("fast path accepted what encoding/json rejects: %v", err)
		}
		type view struct {
			Text, Tools, Usage bool
			Finish             string
			Prompt, Completion int
		}
		a := view{len(fast.text) > 0, fast.toolCalls, fast.hasUsage, fast.finishReason, fast.promptTokens, fast.completion}
		b := view{len(slow.text) > 0, slow.toolCalls, slow.hasUsage, slow.finishReason, slow.promptTokens, slow.completion}
		if a != b {
			t.Errorf("fast %+v, encoding/json %+v", a, b)
		}
	})
}
