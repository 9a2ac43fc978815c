package stream

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors of a stream; Stream wraps them with details, test them with errors.Is.
var (
	// ErrTruncated means the body ended before "[DONE]" and before any finish_reason.
	ErrTruncated = errors.New("stream truncated")
	// ErrMalformed means a chunk was not the JSON the OpenAI streaming format promises.
	ErrMalformed = errors.New("malformed chunk")
	// ErrServerError means the server sent an error object inside the stream.
	ErrServerError = errors.New("error inside the stream")
	// ErrStalled means the body delivered nothing for the idle timeout (WithIdleTimeout).
	ErrStalled = errors.New("stream stalled")
	// ErrRepetition means the output ended in a repeating loop (see RepetitionConfig).
	ErrRepetition = errors.New("repeating output")
)

// HTTPError is a response with status ≥ 400; Message is the server's error message (or the start
// of the body when it had none).
type HTTPError struct {
	Status  int
	Message string
}

// Error does format the status and the server's message.
func (e *HTTPError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// Reason does name the class of a Stream error in one word for results files: "http_<status>",
// "truncated", "malformed", "server_error", "repetition", "stalled", "canceled" or
// "connection"; "" for nil.
func Reason(err error) string {
	var he *HTTPError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &he):
		return fmt.Sprintf("http_%d", he.Status)
	case errors.Is(err, ErrTruncated):
		return "truncated"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	case errors.Is(err, ErrServerError):
		return "server_error"
	case errors.Is(err, ErrRepetition):
		return "repetition"
	case errors.Is(err, ErrStalled):
		return "stalled"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "connection"
}

// snippet does return at most n bytes of b for an error message, marking a cut.
func snippet(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + fmt.Sprintf("…(%d bytes)", len(b))
}
