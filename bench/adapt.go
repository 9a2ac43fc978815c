package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/speedmatrix/speedmatrix/bench/prompt"
	"github.com/speedmatrix/speedmatrix/bench/server"
	"github.com/speedmatrix/speedmatrix/bench/stream"
	"github.com/speedmatrix/speedmatrix/bench/telemetry"
)

// StreamClient adapts a *stream.Client to Streamer: it marks a repeating-output error as
// ErrBadOutput, so that it fails the cell even for a stream the window's end cancelled.
type StreamClient struct{ C *stream.Client }

// Stream sends req through the stream client.
func (s StreamClient) Stream(ctx context.Context, req StreamRequest, onEvent func(StreamEvent)) (StreamResult, error) {
	res, err := s.C.Stream(ctx, req, onEvent)
	if errors.Is(err, stream.ErrRepetition) {
		err = fmt.Errorf("%w: %w", ErrBadOutput, err)
	}
	return res, err
}

// ServerClient adapts a *server.Client to ServerInfo. A model without max_model_len takes
// llama.cpp's context size from /props.
type ServerClient struct{ C *server.Client }

// Models lists the served models.
func (s ServerClient) Models(ctx context.Context) ([]Model, error) {
	ms, err := s.C.Models(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Model, len(ms))
	var props *server.Props
	for i, m := range ms {
		out[i] = Model{ID: m.ID, MaxModelLen: m.MaxModelLen}
		if m.MaxModelLen == 0 {
			if props == nil {
				p, err := s.C.Props(ctx)
				if err != nil {
					p = server.Props{}
				}
				props = &p
			}
			out[i].MaxModelLen = props.ContextSize
		}
	}
	return out, nil
}

// Health checks /health.
func (s ServerClient) Health(ctx context.Context) error { return s.C.Health(ctx) }

// Version returns the engine version, "" when the server has no version endpoint.
func (s ServerClient) Version(ctx context.Context) (string, error) {
	v, err := s.C.Version(ctx)
	if errors.Is(err, server.ErrNotSupported) {
		return "", nil
	}
	return v, err
}

// TelemetryScraper adapts a *telemetry.Scraper to Scraper.
type TelemetryScraper struct{ S *telemetry.Scraper }

// Scrape reads /metrics once; a server without it (or without any metric name telemetry knows)
// gives ErrNoMetrics.
func (t TelemetryScraper) Scrape(ctx context.Context) (Sample, error) {
	snap, err := t.S.Scrape(ctx)
	if err != nil {
		return Sample{}, err
	}
	if snap.Flavor == telemetry.FlavorNone {
		return Sample{}, ErrNoMetrics
	}
	sm := Sample{
		At:           snap.At,
		Kind:         snap.Flavor,
		HasQueue:     snap.Running.OK && snap.Waiting.OK,
		Running:      snap.Running.V,
		Waiting:      snap.Waiting.V,
		HasKVUsage:   snap.KVUsage.OK,
		KVUsage:      snap.KVUsage.V,
		Counters:     snap,
		BlockSize:    snap.BlockSize,
		NumGPUBlocks: snap.NumGPUBlocks,
	}
	if snap.KVCapacityTokens.OK {
		sm.KVCacheTokens = int(snap.KVCapacityTokens.V)
	}
	return sm, nil
}

// PromptBuilder adapts a *prompt.Builder to Prompter. Builds are sequential (the runner builds
// one prompt at a time), so setting the Builder's model before each is safe.
type PromptBuilder struct{ B *prompt.Builder }

// Build returns a prompt of tokens tokens for model, labelled label within the run.
func (p PromptBuilder) Build(ctx context.Context, model string, tokens int, label string) (Prompt, error) {
	p.B.Model = model
	pr, err := p.B.Build(ctx, tokens, label)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{Text: pr.Text, Tokens: pr.Tokens, Estimated: pr.Method == prompt.MethodEstimate, Note: pr.Note}, nil
}

// NewPrompter returns the Prompter of a run against a real server: prompts sized by the
// server's /tokenize (info), falling back to a characters-per-token ratio calibrated with two
// small requests through s. runID makes every prompt's prefix unique to the run.
func NewPrompter(info *server.Client, s Streamer, runID, endpoint string) PromptBuilder {
	b := &prompt.Builder{Tokenizer: info, RunID: runID, Chat: endpoint == EndpointChat}
	b.Measure = func(ctx context.Context, text string) (int, error) {
		res, err := s.Stream(ctx, StreamRequest{Endpoint: endpoint, Model: b.Model, Prompt: text, MaxTokens: 1}, nil)
		if err != nil {
			return 0, err
		}
		if res.PromptTokens == 0 {
			return 0, errors.New("the server reported no usage.prompt_tokens")
		}
		return res.PromptTokens, nil
	}
	return PromptBuilder{B: b}
}
