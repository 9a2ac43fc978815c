package errbody

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// pythonHTTPServer404 is Python's http.server answer to a path it does not serve.
const pythonHTTPServer404 = `<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 404</p>
        <p>Message: File not found.</p>
        <p>Error code explanation: 404 - Nothing matches the given URI.</p>
    </body>
</html>
`

func TestMessage(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"empty", "", ""},
		{"blank", " \n\t\r\n ", ""},
		{"openai error", `{"error":{"message":"The model ` + "`gpt-5`" + ` does not exist","type":"invalid_request_error","code":404}}`, "The model `gpt-5` does not exist"},
		{"vllm error", `{"object":"error","message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","param":null,"code":400}`, "This model's maximum context length is 8192 tokens."},
		{"error string", `{"error":"model not loaded"}`, "model not loaded"},
		{"fastapi detail", `{"detail":"Not Found"}`, "Not Found"},
		{"fastapi validation", `{"detail":[{"loc":["body","model"],"msg":"field required","type":"value_error.missing"}]}`, "field required"},
		{"message first", `{"message":"outer","error":{"message":"inner"}}`, "outer"},
		{"null error, detail", `{"error":null,"detail":"d"}`, "d"},
		{"json string", `"overloaded"`, "overloaded"},
		{"multi-line message", `{"error":{"message":"Traceback:\n  File \"x.py\"\n\tValueError: bad"}}`, `Traceback: File "x.py" ValueError: bad`},
		{"json without a message", `{"status":"down"}`, `{"status":"down"}`},
		{"empty message falls through", `{"message":"","error":{"message":"real"}}`, "real"},
		{"python http.server", pythonHTTPServer404, "Error response"},
		{"nginx", "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n", "502 Bad Gateway"},
		{"title entities and lines", "<html><head><TITLE>\n  Service &amp; API\n  unavailable </TITLE></head></html>", "Service & API unavailable"},
		{"html without a title", "<html><body>\n<!-- a comment -->\n<script>var x = 1;</script>\n<h1>Gateway &lt;timeout&gt;</h1><p>later</p></body></html>", "Gateway <timeout>"},
		{"plain text", "404 page not found\n", "404 page not found"},
		{"first non-empty line", "\n\n  upstream connect error  \nreset reason: overflow\n", "upstream connect error"},
		{"long line", long, strings.Repeat("x", MaxLen) + "…"},
		{"invalid utf-8", "bad \xff byte", "bad \uFFFD byte"},
		{"control characters", "a\x00b\x1b[31mc", "a b [31mc"},
		{"not json after all", "{oops\nsecond", "{oops"},
		{"a tag that is not html", "<nope>\nnext", "<nope>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Message([]byte(tc.body)); got != tc.want {
				t.Errorf("Message(%.60q) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

func TestMessageLongJSON(t *testing.T) {
	got := Message([]byte(`{"error":{"message":"` + strings.Repeat("é", 500) + `"}}`))
	if want := strings.Repeat("é", MaxLen) + "…"; got != want {
		t.Errorf("a long message: %q, want %d runes and …", got, MaxLen)
	}
}

// FuzzMessage: whatever the body, the message is one trimmed line of valid UTF-8, at most
// MaxLen runes and "…".
func FuzzMessage(f *testing.F) {
	for _, s := range []string{
		"", pythonHTTPServer404, `{"error":{"message":"m"}}`, `{"detail":[{"msg":"x"}]}`, `"s"`, `[[[[[[[[[["deep"]]]]]]]]]]`,
		"<html><title>t</title>", "<html><script>", "<!doctype html><!--", "plain\ntext", "\xff\xfe", "<title>a</title",
		`{"error":{"error":{"error":{"error":{"error":{"error":{"error":{"error":{"error":{"error":"deep"}}}}}}}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := Message(body)
		if !utf8.ValidString(got) {
			t.Fatalf("Message(%q) = %q: not valid UTF-8", body, got)
		}
		if strings.IndexFunc(got, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) >= 0 {
			t.Fatalf("Message(%q) = %q: more than one line", body, got)
		}
		if n := utf8.RuneCountInString(strings.TrimSuffix(got, "…")); n > MaxLen {
			t.Fatalf("Message(%q) = %d runes, want at most %d", body, n, MaxLen)
		}
		if got != strings.TrimSpace(got) {
			t.Fatalf("Message(%q) = %q: not trimmed", body, got)
		}
	})
}
