package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary YAML to the reader (it replaces internal/cli's FuzzRunConfig): it must return a configuration or an error
// naming where, never panic; an accepted file gives lists without empty items and validates
// without panicking. Seeds: the examples of testdata, README.md's and docs/'s.
func FuzzLoad(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(string(data))
		}
	}
	for _, doc := range userDocs(f) {
		for _, b := range readmeYAMLBlocks(doc) {
			if !isWorkflow(b.Doc) {
				f.Add(string(b.Doc))
			}
		}
	}
	f.Add("url: http://x\ncontexts: [8K, 16K]\nconcurrency: \"1,2\"\n")
	f.Add("engine:\n  build: {command: make}\n  serve: {command: [a, \"${PORT}\"], env: {A: \"$$\"}}\n")
	f.Add("engine:\n  name: vllm\nhardware:\n  gpu_count: 2\n")
	f.Add("cells: decode/8K/32\nduration: 30s\n")
	f.Add("contexts: {a: b}\n")
	f.Add("a: &a [1]\nb: *a\n")
	f.Add("- 1\n- 2\n")
	f.Fuzz(func(t *testing.T, doc string) {
		c := Default()
		err := Parse("f.yaml", []byte(doc), &c)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for _, l := range []List{c.Contexts, c.Concurrency, c.PrefillContexts, c.Cells} {
			for _, s := range l {
				if strings.TrimSpace(s) == "" {
					t.Errorf("empty item in %q", l)
				}
			}
		}
		_ = c.Validate()
	})
}
