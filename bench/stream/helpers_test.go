package stream

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// capturesDir holds the real-server captures.
const capturesDir = "../../testdata/servers"

// readCapture does read one capture file of the repository's testdata/servers.
func readCapture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(capturesDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sseHandler does serve body as an SSE response, flushed in pieces of split bytes (0: at once)
// with gap between pieces, after waiting first.
func sseHandler(body []byte, split int, first, gap time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = drainBody(r)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		fl.Flush()
		time.Sleep(first)
		if split <= 0 {
			split = len(body)
		}
		for i := 0; i < len(body); i += split {
			if _, err := w.Write(body[i:min(i+split, len(body))]); err != nil {
				return
			}
			fl.Flush()
			if gap > 0 {
				time.Sleep(gap)
			}
		}
	}
}

// connCounter does count a test server's open connections.
type connCounter struct {
	mu   sync.Mutex
	open int
	seen int
}

func (cc *connCounter) hook(_ net.Conn, s http.ConnState) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	switch s {
	case http.StateNew:
		cc.open++
		cc.seen++
	case http.StateClosed, http.StateHijacked:
		cc.open--
	}
}

func (cc *connCounter) counts() (open, seen int) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.open, cc.seen
}

// newServer does start an httptest server with a connection counter.
func newServer(t testing.TB, h http.Handler) (*httptest.Server, *connCounter) {
	t.Helper()
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = cc.hook
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cc
}

// waitNoConns does fail the test unless the server's connections all close within 2 s after the
// client let go of them.
func waitNoConns(t testing.TB, cc *connCounter) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		open, _ := cc.counts()
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open after the client closed", open)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// drainBody does read and drop a request body.
func drainBody(r *http.Request) (int64, error) { return io.Copy(io.Discard, r.Body) }
