package redact

import (
	"os"
	"strings"
	"testing"
)

// script is a realistic launch script; secrets are planted between its lines and words.
var script = []string{
	"#!/bin/bash",
	"# GLM-5.3 on two H200 NVL",
	"set -euo pipefail",
	"export VLLM_USE_V2_MODEL_RUNNER=1 VLLM_ENGINE_READY_TIMEOUT_S=3600",
	`cd "$HOME/work"`,
	"vllm serve nvidia/GLM-5.3-Flash-NVFP4 \\",
	"  --tensor-parallel-size 2 \\",
	"  --max-num-batched-tokens 8192 \\",
	"  --tokenizer nvidia/GLM \\",
	`  --model-loader-extra-config '{"enable_multithread_load":true,"num_threads":128}' \`,
	"  --port 8000",
	"",
}

// firstArg and lastArg are the script's lines that hold vllm's flags.
const firstArg, lastArg = 6, 10

// layout is a way of writing a secret into a launch command; {K} is the key, {T} a second word
// of a key with a space in it.
type layout struct {
	text string
	kind int // argument of vllm, statement, prefix of the vllm command
	// named: the key is the value of a secret-looking flag, variable or header, so it must go
	// even when the caller does not know it.
	named bool
}

const (
	arg = iota
	stmt
	prefix
)

var layouts = []layout{
	{"--api-key {K}", arg, true},
	{"--api-key={K}", arg, true},
	{"--api-key \\\n    {K}", arg, true},
	{"--api-key '{K}'", arg, true},
	{`--api-key "{K}"`, arg, true},
	{"--api-key '{K} {T}'", arg, true},
	{`--api-key "{K} {T}"`, arg, true},
	{"--api-key='{K} {T}'", arg, true},
	{`--api-key={K}"{T}"`, arg, true},
	{"--api-key {K}\\ {T}", arg, true},
	{"--api-key $'{K}\\t{T}'", arg, true},
	{`--api-key "$(echo {K})"`, arg, true},
	{"--api-key ${KEY:-{K}}", arg, true},
	{"--hf-token {K}", arg, true},
	{"--hf-token={K}", arg, true},
	{"--env=VLLM_API_KEY={K}", arg, true},
	{`--env="VLLM_API_KEY={K} {T}"`, arg, true},
	{"-e HF_TOKEN={K}", arg, true},
	{"-e 'HF_TOKEN={K} {T}'", arg, true},
	{`-H "Authorization: Bearer {K}"`, arg, true},
	{`-H 'authorization: bearer {K} {T}'`, arg, true},
	{`--header "X-Api-Key: {K}"`, arg, true},
	{"export X_TOKEN={K}", stmt, true},
	{`export X_TOKEN="{K} {T}"`, stmt, true},
	{"HF_TOKEN={K}", stmt, true},
	{"# --api-key {K}", stmt, true},
	{"# HF_TOKEN={K}", stmt, true},
	{`bash -c "vllm serve m --api-key {K} --port 1"`, stmt, true},
	{`ARGS="--api-key {K}"`, stmt, true},
	{"cat >.env <<EOF\nHF_TOKEN={K}\nEOF", stmt, true},
	{"env VLLM_API_KEY={K}", prefix, true},
	{"HF_TOKEN={K}", prefix, true},
	{"VLLM_API_KEY='{K} {T}'", prefix, true},
	// Only a known value finds these.
	{"--served-model-name {K}", arg, false},
	{`--hf-overrides '{"x":"{K}"}'`, arg, false},
	{"--url http://h/{K}/v1", arg, false},
	{"--seed x{K}", arg, false},
	{"echo {K}", stmt, false},
}

// keyFrom derives an API-key-like value, sk- and at least five letters or digits, from raw.
func keyFrom(raw, prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range raw {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	for b.Len() < len(prefix)+5 {
		b.WriteByte('Q')
	}
	return b.String()
}

// plant writes layout ly with key k and second word t into the script (oneLine: into the
// reference's one-line command) at a position chosen by pos.
func plant(ref string, ly layout, k, t string, pos uint16, oneLine bool) string {
	text := strings.ReplaceAll(strings.ReplaceAll(ly.text, "{K}", k), "{T}", t)
	if oneLine {
		words := strings.Split(ref, " ")
		switch ly.kind {
		case arg:
			i := 3 + int(pos)%(len(words)-2) // after "env A=1 B=2", within vllm's words
			words = append(words[:i], append([]string{text}, words[i:]...)...)
			return strings.Join(words, " ")
		case prefix:
			return text + " " + ref
		default:
			return text + "\n" + ref
		}
	}
	lines := append([]string(nil), script...)
	switch ly.kind {
	case arg:
		i := firstArg + int(pos>>1)%(lastArg-firstArg+1)
		if pos&1 == 0 { // a line of its own
			lines = append(lines[:i], append([]string{"  " + text + " \\"}, lines[i:]...)...)
		} else { // after the line's flag
			l := strings.TrimSuffix(lines[i], " \\")
			lines[i] = strings.Replace(lines[i], l, l+" "+text, 1)
		}
	case prefix:
		lines[firstArg-1] = text + " " + lines[firstArg-1]
	default:
		i := 1 + int(pos)%(firstArg-1)
		lines = append(lines[:i], append([]string{text}, lines[i:]...)...)
	}
	return strings.Join(lines, "\n")
}

// FuzzRedact plants an API-key-like value in a layout at a position and checks that it never
// survives Command: not when the caller knows the value, and not when the layout makes it the
// value of a secret-looking flag, variable or header. A command that parsed must keep its lines
// and still parse.
func FuzzRedact(f *testing.F) {
	for i := range layouts {
		f.Add(uint8(i), uint16(i*7), "E5abcdef", "x9", false)
		f.Add(uint8(i), uint16(i*3+1), "Zz0", "tail", true)
	}
	b, err := os.ReadFile("testdata/reference-launch.sh")
	if err != nil {
		f.Fatal(err)
	}
	ref := strings.Replace(strings.TrimSpace(string(b)), Marker, `"$VLLM_API_KEY"`, 1)
	f.Fuzz(func(t *testing.T, which uint8, pos uint16, raw, raw2 string, oneLine bool) {
		ly := layouts[int(which)%len(layouts)]
		key, tail := keyFrom(raw, "sk-"), keyFrom(raw2, "tl-")
		in := plant(ref, ly, key, tail, pos, oneLine)
		for _, known := range []bool{false, true} {
			if !known && !ly.named {
				continue
			}
			var opts []Option
			if known {
				opts = append(opts, WithValues(key, tail))
			}
			r := CommandResult(in, opts...)
			if strings.Contains(r.Text, key) || strings.Contains(r.Text, tail) && strings.Contains(ly.text, "{T}") {
				t.Fatalf("known %v: the key survived\nin:\n%s\nout:\n%s", known, in, r.Text)
			}
			if !r.Parsed {
				t.Fatalf("the planted command did not parse: %v\n%s", r.ParseErr, in)
			}
			if strings.Count(r.Text, "\n") != strings.Count(in, "\n") {
				t.Errorf("known %v: lines changed\nin:\n%s\nout:\n%s", known, in, r.Text)
			}
			if !parses(r.Text) {
				t.Errorf("known %v: the redacted command no longer parses\nin:\n%s\nout:\n%s", known, in, r.Text)
			}
			for _, keep := range []string{"--max-num-batched-tokens 8192", "--tensor-parallel-size 2", "VLLM_USE_V2_MODEL_RUNNER=1"} {
				if strings.Contains(in, keep) && !strings.Contains(r.Text, keep) {
					t.Errorf("known %v: %q was lost\nin:\n%s\nout:\n%s", known, keep, in, r.Text)
				}
			}
		}
	})
}

// FuzzRedactCommand appends a secret after --api-key (and as HF_TOKEN=) to an arbitrary command,
// shell or not: the secret must not survive as a word of its own or as the value of NAME=, and
// must not survive at all when the caller knows it.
func FuzzRedactCommand(f *testing.F) {
	f.Add("vllm serve m --port 8000", "s3cret")
	f.Add("env A=1 vllm serve", "tok")
	f.Add("echo 'unbalanced", "s3cret-value")
	f.Add("vllm serve m # comment", "Abc+/def=")
	f.Fuzz(func(t *testing.T, cmd, secret string) {
		secret = strings.Map(func(r rune) rune {
			if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+/=-", r)) {
				return r
			}
			return -1
		}, secret)
		if secret == "" || strings.HasPrefix(secret, "-") || strings.Contains(cmd, secret) || strings.Contains(Marker, secret) {
			return
		}
		for _, full := range []string{cmd + " --api-key " + secret, cmd + " --api-key=" + secret, "HF_TOKEN=" + secret + " " + cmd,
			cmd + "\n--api-key " + secret, cmd + " \\\n --api-key \\\n " + secret} {
			got := Command(full)
			for _, w := range strings.Fields(got) {
				if w == secret || strings.HasSuffix(w, "="+secret) {
					t.Errorf("Command(%q) = %q keeps the secret", full, got)
				}
			}
			if len(secret) >= MinKnownLen {
				if got := Command(full, WithValues(secret)); strings.Contains(got, secret) {
					t.Errorf("Command(%q, WithValues(%q)) = %q keeps the secret", full, secret, got)
				}
			}
		}
	})
}
