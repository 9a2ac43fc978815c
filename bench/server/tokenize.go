package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Tokens is the server tokenizer's answer.
type Tokens struct {
	IDs []int
	// MaxModelLen is vLLM's max_model_len from the /tokenize answer; 0 when absent.
	MaxModelLen int
}

// tokenizeReply is both vLLM's {"tokens","count","max_model_len"} and llama.cpp's {"tokens"}.
type tokenizeReply struct {
	Tokens      []json.RawMessage `json:"tokens"`
	Count       *int              `json:"count"`
	MaxModelLen int               `json:"max_model_len"`
}

// DecodeTokenize does parse a /tokenize answer body. Token entries are ids, or llama.cpp's
// {"id": n, "piece": …} objects; a "count" that disagrees with the ids is an error.
func DecodeTokenize(body []byte) (Tokens, error) {
	var r tokenizeReply
	if err := json.Unmarshal(body, &r); err != nil {
		return Tokens{}, fmt.Errorf("tokenize answer is not JSON: %w", err)
	}
	if r.Tokens == nil {
		return Tokens{}, errors.New(`tokenize answer has no "tokens" list`)
	}
	ids := make([]int, len(r.Tokens))
	for i, raw := range r.Tokens {
		if err := json.Unmarshal(raw, &ids[i]); err != nil {
			var o struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal(raw, &o) != nil || o.ID == nil {
				return Tokens{}, fmt.Errorf("tokenize answer: token %d is %s, want an integer id", i, cut(raw, 40))
			}
			ids[i] = *o.ID
		}
	}
	if r.Count != nil && *r.Count != len(ids) {
		return Tokens{}, fmt.Errorf("tokenize answer: count %d but %d tokens", *r.Count, len(ids))
	}
	return Tokens{IDs: ids, MaxModelLen: r.MaxModelLen}, nil
}

// Tokenize does tokenize text with the server's tokenizer as a completion prompt would be
// (special tokens such as BOS included, as the server adds them by default). It sends vLLM's
// shape {"model", "prompt"} first and llama.cpp's {"content"} when that is refused, and
// remembers which one worked. An empty token list for non-empty text is a refusal too
// (llama-server answers vLLM's shape with HTTP 200 {"tokens":[]}). ErrNotSupported when the
// server has no /tokenize, or when every shape is answered with an empty list.
func (c *Client) Tokenize(ctx context.Context, model, text string) (Tokens, error) {
	shapes := []int32{1, 2}
	if s := c.tokShape.Load(); s != 0 {
		shapes = []int32{s}
	}
	var lastErr error
	refused := 0
	for _, shape := range shapes {
		var in any = map[string]any{"model": model, "prompt": text}
		if shape == 2 {
			in = map[string]any{"content": text, "add_special": true}
		}
		var raw json.RawMessage
		err := c.call(ctx, http.MethodPost, "/tokenize", in, &raw)
		if err == nil {
			toks, derr := DecodeTokenize(raw)
			switch {
			case derr == nil && len(toks.IDs) == 0 && text != "":
				// llama.cpp answers vLLM's shape 200 {"tokens":[]}: it reads only "content".
				refused++
				err = fmt.Errorf("/tokenize returned no tokens for %d characters in the %s request shape", len(text), shapeName(shape))
			case derr == nil:
				c.tokShape.Store(shape)
				return toks, nil
			default:
				err = derr
			}
		}
		lastErr = err
		if errors.Is(err, ErrNotSupported) {
			return Tokens{}, err
		}
	}
	if refused == len(shapes) {
		// Every shape was answered with an empty list: the endpoint does not tokenize for us.
		return Tokens{}, fmt.Errorf("%w: %v", ErrNotSupported, lastErr)
	}
	return Tokens{}, lastErr
}

// shapeName does name a /tokenize request shape for messages.
func shapeName(shape int32) string {
	if shape == 2 {
		return `llama.cpp {"content"}`
	}
	return `vLLM {"model","prompt"}`
}

// Detokenize does turn token ids back into text with the server's tokenizer, in the request shape
// Tokenize found (vLLM {"model","tokens"} → {"prompt"}; llama.cpp {"tokens"} → {"content"}).
func (c *Client) Detokenize(ctx context.Context, model string, ids []int) (string, error) {
	var out struct {
		Prompt  *string `json:"prompt"`
		Content *string `json:"content"`
	}
	in := map[string]any{"model": model, "tokens": ids}
	if c.tokShape.Load() == 2 {
		in = map[string]any{"tokens": ids}
	}
	if err := c.call(ctx, http.MethodPost, "/detokenize", in, &out); err != nil {
		return "", err
	}
	switch {
	case out.Prompt != nil:
		return *out.Prompt, nil
	case out.Content != nil:
		return *out.Content, nil
	}
	return "", errors.New(`detokenize answer has neither "prompt" nor "content"`)
}

// TokenizeChat does tokenize text as the user message of a chat request, chat template and
// generation prompt included (vLLM's /tokenize with "messages"), so that its count is the
// prompt_tokens a /v1/chat/completions request with that message reports. ErrNotSupported when
// the server has no /tokenize or does not take messages there.
func (c *Client) TokenizeChat(ctx context.Context, model, text string) (Tokens, error) {
	in := map[string]any{
		"model":                 model,
		"messages":              []map[string]string{{"role": "user", "content": text}},
		"add_generation_prompt": true,
	}
	var raw json.RawMessage
	err := c.call(ctx, http.MethodPost, "/tokenize", in, &raw)
	var se *StatusError
	if errors.As(err, &se) && (se.Status == http.StatusBadRequest || se.Status == http.StatusUnprocessableEntity || se.Status == http.StatusInternalServerError) {
		return Tokens{}, fmt.Errorf("%w: /tokenize does not take chat messages: %v", ErrNotSupported, err)
	}
	if err != nil {
		return Tokens{}, err
	}
	return DecodeTokenize(raw)
}
