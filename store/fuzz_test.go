package store

import (
	"strings"
	"testing"
	"time"
)

// FuzzDecodeIndex feeds index.json contents (anyone who can push to the data branch writes it)
// to decodeIndex: it must not panic, and whatever it accepts must re-encode and decode to the
// same entries, and no accepted entry may lead Open outside the layout.
func FuzzDecodeIndex(f *testing.F) {
	ix := &Index{Entries: []Entry{
		{Commit: strings.Repeat("a", 40), ConfigID: "0123456789abcdef", Kind: KindDefault, Time: time.Unix(0, 0).UTC(), Path: "results/" + strings.Repeat("a", 40) + "/0123456789abcdef.json"},
		{Commit: strings.Repeat("b", 40), ConfigID: "0123456789abcdef", Kind: KindPR, PR: 3, Time: time.Unix(1, 0).UTC(), Path: "../../etc/passwd"},
	}}
	f.Add(ix.encode())
	f.Add([]byte(`{"schema":"speedmatrix/store-index/v1","entries":null}`))
	f.Add([]byte(`{"schema":"speedmatrix/store-index/v1","entries":[{"commit":"../../etc","config_id":"passwd","kind":"default-branch","time":"2026-01-01T00:00:00Z","path":"../etc/passwd.json"}]}`))
	f.Add([]byte(`{"schema":"other"}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeIndex(data, "")
		if err != nil {
			return
		}
		again, err := decodeIndex(got.encode(), "")
		if err != nil {
			t.Fatalf("re-decoding an accepted index: %v", err)
		}
		if len(again.Entries) != len(got.Entries) {
			t.Fatalf("%d entries, then %d", len(got.Entries), len(again.Entries))
		}
		for _, e := range got.Entries {
			if checkEntryPath(e) == nil && (strings.Contains(e.Path, "..") || strings.HasPrefix(e.Path, "/")) {
				t.Fatalf("entry path %q passes the layout check", e.Path)
			}
		}
	})
}
