package bench

import (
	"context"

	"github.com/speedmatrix/speedmatrix/bench/stream"
)

// StreamClient adapts a *stream.Client to Streamer.
type StreamClient struct{ C *stream.Client }

// Stream sends req through the stream client, converting its types.
func (s StreamClient) Stream(ctx context.Context, req StreamRequest, onEvent func(StreamEvent)) (StreamResult, error) {
	var cb func(stream.Event)
	if onEvent != nil {
		cb = func(ev stream.Event) { onEvent(StreamEvent{At: ev.At, Tokens: ev.Tokens, CumTokens: ev.CumTokens}) }
	}
	res, err := s.C.Stream(ctx, stream.Request{Endpoint: req.Endpoint, Model: req.Model, Prompt: req.Prompt, MaxTokens: req.MaxTokens}, cb)
	out := StreamResult{
		Queued:       res.Queued,
		Sent:         res.Sent,
		FirstToken:   res.FirstToken,
		Last:         res.Last,
		PromptTokens: res.PromptTokens,
		OutputTokens: res.OutputTokens,
		Chunks:       res.Chunks,
		FinishReason: res.FinishReason,
	}
	if len(res.Events) > 0 {
		out.Events = make([]StreamEvent, len(res.Events))
		for i, ev := range res.Events {
			out.Events[i] = StreamEvent{At: ev.At, Tokens: ev.Tokens, CumTokens: ev.CumTokens}
		}
	}
	return out, err
}
