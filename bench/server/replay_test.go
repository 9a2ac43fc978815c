package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exchange is one request and its answer in a capture file of testdata/servers.
type exchange struct {
	Method, Path string
	Keys         []string // the request body's JSON keys, sorted
	Status       int
	Body         string
}

// readExchanges does parse a capture of the form "METHOD /path {json}", the HTTP status line,
// headers, a blank line and the body; "#" lines are comments.
func readExchanges(t *testing.T, rel string) []exchange {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../testdata/servers", rel))
	if err != nil {
		t.Fatal(err)
	}
	var out []exchange
	var cur *exchange
	inBody := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "POST ") || strings.HasPrefix(line, "GET "):
			method, rest, _ := strings.Cut(line, " ")
			path, body, _ := strings.Cut(rest, " ")
			out = append(out, exchange{Method: method, Path: path, Keys: jsonKeys(t, body)})
			cur, inBody = &out[len(out)-1], false
		case cur != nil && strings.HasPrefix(line, "HTTP/"):
			f := strings.Fields(line)
			cur.Status, _ = strconv.Atoi(f[1])
		case cur != nil && !inBody && line == "":
			inBody = cur.Status != 0
		case cur != nil && inBody && line != "":
			cur.Body += line
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no exchange", rel)
	}
	return out
}

// jsonKeys does return the sorted keys of a JSON object ("" for none).
func jsonKeys(t *testing.T, body string) []string {
	t.Helper()
	if strings.TrimSpace(body) == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("request body %q: %v", body, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// replay does start a server that answers every request as the capture did a request of the
// same method, path and body keys, and 400 otherwise.
func replay(t *testing.T, rel string) *httptest.Server {
	t.Helper()
	xs := readExchanges(t, rel)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		keys := jsonKeys(t, string(b))
		for _, x := range xs {
			if x.Method == r.Method && x.Path == r.URL.Path && slices.Equal(x.Keys, keys) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(x.Status)
				io.WriteString(w, x.Body)
				return
			}
		}
		w.WriteHeader(http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestLlamaServerTokenizeCapture replays llama-server's answers: vLLM's request shape gets HTTP
// 200 with an empty list, which must not be taken as the tokenization.
func TestLlamaServerTokenizeCapture(t *testing.T) {
	srv := replay(t, "llama-server/tokenize.txt")
	c := New(srv.URL)
	ctx := context.Background()
	toks, err := c.Tokenize(ctx, "sim-tiny", "Hello world, this is a test.")
	if err != nil {
		t.Fatalf("Tokenize: %v", err)
	}
	if diff := cmp.Diff([]int{1, 328, 269, 283, 688, 889, 407, 521, 465, 262, 300, 269, 852, 411}, toks.IDs); diff != "" {
		t.Errorf("Tokenize ids (-want +got):\n%s", diff)
	}
	if s, err := c.Detokenize(ctx, "sim-tiny", []int{328, 269, 283}); err != nil || s != " Hel" {
		t.Errorf("Detokenize %q, %v; want \" Hel\"", s, err)
	}
}

// TestTokenizeEmptyListIsRefused checks that a server answering every shape with an empty list
// for non-empty text is treated as one without /tokenize, and that empty text may tokenize empty.
func TestTokenizeEmptyListIsRefused(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("POST /tokenize", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"tokens":[]}`)
	})
	ctx := context.Background()
	if _, err := c.Tokenize(ctx, "m", "some text"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Tokenize of non-empty text answered []: %v, want ErrNotSupported", err)
	}
	if toks, err := c.Tokenize(ctx, "m", ""); err != nil || len(toks.IDs) != 0 {
		t.Errorf("Tokenize of empty text: %+v, %v; want no tokens, no error", toks, err)
	}
}
