package sim

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSkimPrompt(t *testing.T) {
	tests := []struct {
		body   string
		prompt string
		ok     bool
	}{
		{`{"model":"m","prompt":"hello world","max_tokens":3}`, "hello world", true},
		{` { "stream_options" : {"a":[1,{"b":"}"}]}, "prompt" : "x y" } `, "x y", true},
		{`{"prompt":"with \"escape\""}`, "", false},
		{`{"prompt":["list"]}`, "", false},
		{`{"max_tokens":3}`, "", false},
		{`["prompt","x"]`, "", false},
		{`{"prompt":"unterminated}`, "", false},
	}
	for _, tt := range tests {
		p, rest, ok := skimPrompt([]byte(tt.body))
		if ok != tt.ok || string(p) != tt.prompt {
			t.Errorf("skimPrompt(%s) = %q, %v; want %q, %v", tt.body, p, ok, tt.prompt, tt.ok)
			continue
		}
		if ok {
			var full, skimmed genRequest
			if err := json.Unmarshal([]byte(tt.body), &full); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(rest, &skimmed); err != nil {
				t.Fatalf("rest %s: %v", rest, err)
			}
			if string(skimmed.Prompt) != `""` {
				t.Errorf("rest keeps prompt %s", skimmed.Prompt)
			}
		}
	}
}

// FuzzSkimPrompt checks the skim against encoding/json: whenever it finds a prompt, the full
// decode agrees on the prompt and on every other field.
func FuzzSkimPrompt(f *testing.F) {
	for _, s := range []string{`{"model":"m","prompt":"hello","max_tokens":3,"stream":true}`,
		`{"stream_options":{"include_usage":true},"prompt":"a b"}`, `{"prompt":"x","prompt":"y"}`, `{"a":"\\","prompt":"p"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p, rest, ok := skimPrompt([]byte(body))
		if !ok {
			return
		}
		var full genRequest
		if err := json.Unmarshal([]byte(body), &full); err != nil {
			return // the caller decodes the rest and reports the error
		}
		var skimmed genRequest
		if err := json.Unmarshal(rest, &skimmed); err != nil {
			t.Fatalf("the full body decodes but the skimmed rest %q does not: %v", rest, err)
		}
		var want string
		if json.Unmarshal(full.Prompt, &want) != nil || want != string(p) {
			t.Fatalf("skim found prompt %q, encoding/json %s", p, full.Prompt)
		}
		full.Prompt, skimmed.Prompt = nil, nil
		if diff := cmp.Diff(full, skimmed); diff != "" {
			t.Fatalf("other fields differ (-full +skimmed):\n%s", diff)
		}
	})
}
