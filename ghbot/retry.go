package ghbot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy bounds the retries of GitHub API requests.
type RetryPolicy struct {
	// MaxAttempts is the most times one request is sent, the first included.
	MaxAttempts int
	// BaseDelay is the wait before the second attempt after a 5xx or a network error; it doubles
	// with every further attempt up to MaxDelay.
	BaseDelay, MaxDelay time.Duration
	// MaxWait is the longest wait honoured for a rate limit (a Retry-After or an
	// X-RateLimit-Reset); a longer one returns the response at once, and go-github reports it as
	// *github.RateLimitError or *github.AbuseRateLimitError.
	MaxWait time.Duration
}

// DefaultRetryPolicy returns 5 attempts, backoff from 1 s to 16 s, rate-limit waits up to 2 min.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, BaseDelay: time.Second, MaxDelay: 16 * time.Second, MaxWait: 2 * time.Minute}
}

// secondaryDefaultWait is GitHub's advice for a secondary rate limit that names no Retry-After.
const secondaryDefaultWait = time.Minute

// retryTransport resends a request on a 5xx, on a network error of an idempotent method, on a
// secondary rate limit (honouring Retry-After) and on an exhausted primary limit whose reset is
// within MaxWait. POSTs are retried on 5xx too: GitHub may have acted on one, so the callers
// that create things (comments, check runs) look for an existing one first and repair
// duplicates.
type retryTransport struct {
	next   http.RoundTripper
	policy RetryPolicy
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	logger *slog.Logger
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		body = b
	}
	ctx := req.Context()
	max := t.policy.MaxAttempts
	if max < 1 {
		max = 1
	}
	for attempt := 1; ; attempt++ {
		r := req.Clone(ctx)
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			r.ContentLength = int64(len(body))
		}
		resp, err := t.next.RoundTrip(r)
		if ctx.Err() != nil {
			return resp, err
		}
		wait, why, ok := t.classify(req.Method, resp, err, attempt)
		if !ok || attempt >= max {
			if ok {
				t.logger.Warn("GitHub API: giving up", "method", req.Method, "path", req.URL.Path, "attempts", attempt, "last", why)
			}
			return resp, err
		}
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
		}
		t.logger.Warn("GitHub API: retrying", "method", req.Method, "path", req.URL.Path, "attempt", attempt, "why", why, "wait", wait)
		if err := t.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s %s: waiting to retry after %s: %w", req.Method, req.URL.Path, why, err)
		}
	}
}

// classify says whether to retry after an attempt, after how long and why.
func (t *retryTransport) classify(method string, resp *http.Response, err error, attempt int) (time.Duration, string, bool) {
	backoff := t.policy.BaseDelay << (attempt - 1)
	if backoff > t.policy.MaxDelay || backoff <= 0 {
		backoff = t.policy.MaxDelay
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, "", false
		}
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
			return backoff, "network error: " + err.Error(), true
		}
		return 0, "", false
	}
	switch resp.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		why := resp.Status
		if d, ok := retryAfter(resp, t.now()); ok {
			if d > t.policy.MaxWait {
				return 0, "", false
			}
			return d, why + " with Retry-After", true
		}
		return backoff, why, true
	case http.StatusForbidden, http.StatusTooManyRequests:
		if d, ok := retryAfter(resp, t.now()); ok {
			if d > t.policy.MaxWait {
				t.logger.Warn("GitHub API: secondary rate limit asks for a longer wait than allowed", "retry_after", d, "max_wait", t.policy.MaxWait)
				return 0, "", false
			}
			return d, "secondary rate limit (Retry-After)", true
		}
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
			if err != nil {
				return 0, "", false
			}
			d := time.Unix(reset, 0).Sub(t.now()) + time.Second
			if d < time.Second {
				d = time.Second
			}
			if d > t.policy.MaxWait {
				t.logger.Warn("GitHub API: primary rate limit exhausted; its reset is too far to wait for", "reset", time.Unix(reset, 0).UTC(), "max_wait", t.policy.MaxWait)
				return 0, "", false
			}
			return d, "primary rate limit exhausted (X-RateLimit-Reset)", true
		}
		if secondaryMessage(resp) {
			if secondaryDefaultWait > t.policy.MaxWait {
				return 0, "", false
			}
			return secondaryDefaultWait, "secondary rate limit (no Retry-After)", true
		}
	}
	return 0, "", false
}

// retryAfter reads a Retry-After header in seconds or as an HTTP date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		d := at.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// secondaryMessage reports whether a 403/429 body names a secondary rate limit; it restores the
// body for the caller.
func secondaryMessage(resp *http.Response) bool {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	s := strings.ToLower(string(b))
	return strings.Contains(s, "secondary rate limit") || strings.Contains(s, "abuse detection")
}

// sleepContext waits d or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}
