package redact

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"
)

// parses reports whether s parses as bash, once every marker is replaced by a plain word (an
// unquoted marker reads as a redirection; that is deliberate, see the package doc).
func parses(s string) bool {
	s = strings.ReplaceAll(s, Marker, "REDACTED")
	_, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	return err == nil
}

func TestCommand(t *testing.T) {
	cases := []struct{ name, in, want string }{
		// The cases of the former cli.RedactCommand, whose answers still hold.
		{"flag and value", "vllm serve m --api-key abc --port 8000", "vllm serve m --api-key <redacted> --port 8000"},
		{"flag=value", "vllm serve m --api-key=abc", "vllm serve m --api-key=<redacted>"},
		{"env prefix", "env HF_TOKEN=hf_x VLLM_USE_V2_MODEL_RUNNER=1 vllm serve m", "env HF_TOKEN=<redacted> VLLM_USE_V2_MODEL_RUNNER=1 vllm serve m"},
		{"several secret flags", "server --hf-token tok --secret-file /x --password p", "server --hf-token <redacted> --secret-file <redacted> --password <redacted>"},
		{"no secret", "vllm serve m --max-num-seqs 32 --kv-cache-dtype fp8", "vllm serve m --max-num-seqs 32 --kv-cache-dtype fp8"},
		{"flag without value", "vllm serve m --api-key", "vllm serve m --api-key"},
		{"tokens and tokenizer stay", "vllm serve m --tokenizer org/tok --max-num-batched-tokens 8192", "vllm serve m --tokenizer org/tok --max-num-batched-tokens 8192"},
		{"assignment prefix", "OPENAI_API_KEY=sk-1 server", "OPENAI_API_KEY=<redacted> server"},
		{"empty", "", ""},

		// Layouts the word-splitting redaction missed (issue 8 item 5).
		{"script keeps lines, comments, continuations",
			"#!/bin/bash\n# launch GLM\nexport HF_TOKEN=hf_abcdef\nvllm serve m \\\n  --api-key sk-abcdef \\\n  --port 8000   # the port\n",
			"#!/bin/bash\n# launch GLM\nexport HF_TOKEN=<redacted>\nvllm serve m \\\n  --api-key <redacted> \\\n  --port 8000   # the port\n"},
		{"key on the line after the flag", "vllm serve m --api-key \\\n    sk-abcdef \\\n    --port 8000", "vllm serve m --api-key \\\n    <redacted> \\\n    --port 8000"},
		{"--env=NAME=value", "docker run --env=VLLM_API_KEY=sk-abcdef img", "docker run --env=VLLM_API_KEY=<redacted> img"},
		{"--env NAME=value", "docker run --env VLLM_API_KEY=sk-abcdef img", "docker run --env VLLM_API_KEY=<redacted> img"},
		{"docker -e", "docker run --gpus all -e HF_TOKEN=hf_abc -e X=1 vllm/vllm-openai", "docker run --gpus all -e HF_TOKEN=<redacted> -e X=1 vllm/vllm-openai"},
		{"docker -e quoted", `docker run -e "HF_TOKEN=hf abc" img`, `docker run -e "HF_TOKEN=<redacted>" img`},
		{"Authorization header", `curl -H "Authorization: Bearer sk-abcdef" http://h`, `curl -H "Authorization: Bearer <redacted>" http://h`},
		{"authorization header, any case, single quotes", `curl -H 'authorization:bearer sk-abcdef' http://h`, `curl -H 'authorization:bearer <redacted>' http://h`},
		{"Authorization without scheme", `curl --header "Authorization: sk-abcdef" h`, `curl --header "Authorization: <redacted>" h`},
		{"secret-named header", `curl -H "X-Api-Key: abcdef" h`, `curl -H "X-Api-Key: <redacted>" h`},
		{"quoted key with a space", "vllm serve m --api-key 'sk_E5 x' --port 1", "vllm serve m --api-key '<redacted>' --port 1"},
		{"double-quoted key with a space", `vllm serve m --api-key "sk_E5 x" --port 1`, `vllm serve m --api-key "<redacted>" --port 1`},
		{"flag=quoted value", "vllm serve m --api-key='sk_E5 x' --port 1", "vllm serve m --api-key='<redacted>' --port 1"},
		{"value of several quoted parts", `vllm serve m --api-key "sk x"'y z'w --port 1`, `vllm serve m --api-key "<redacted>" --port 1`},
		{"whole word quoted", `vllm serve m "--api-key=sk x" --port 1`, `vllm serve m "--api-key=<redacted>" --port 1`},
		{"ANSI-C quoting", "vllm serve m --api-key=$'sk\\tx' --port 1", "vllm serve m --api-key=$'<redacted>' --port 1"},
		{"escaped space", `vllm serve m --api-key sk\ x --port 1`, `vllm serve m --api-key <redacted> --port 1`},
		{"hf-token alone keeps the next flag", "vllm serve m --hf-token --port 8000", "vllm serve m --hf-token --port 8000"},
		{"value starting with one dash", "vllm serve m --api-key -sk123 --port 1", "vllm serve m --api-key <redacted> --port 1"},
		{"assignment quoted", `HF_TOKEN="hf abc" vllm serve m`, `HF_TOKEN="<redacted>" vllm serve m`},
		{"lower-case and substring variable", "export my_token=abc mytoken=def MONKEY=ghi", "export my_token=<redacted> mytoken=<redacted> MONKEY=<redacted>"},
		{"declare -x", "declare -x HF_TOKEN=abc", "declare -x HF_TOKEN=<redacted>"},
		{"array", "KEYS=(a b c); echo", "KEYS=(<redacted>); echo"},
		{"sudo -E env", "sudo -E env HF_TOKEN=abc vllm serve", "sudo -E env HF_TOKEN=<redacted> vllm serve"},
		{"flag=value in a URL query", "curl http://h/v1/models?api_key=abcdef", "curl http://h/v1/models?api_key=<redacted>"},
		{"JSON member", `vllm serve m --hf-overrides '{"hf_token": "abc", "x": 1}'`, `vllm serve m --hf-overrides '{"hf_token": "<redacted>", "x": 1}'`},
		{"nested command in double quotes", `bash -c "vllm serve m --api-key sk-abc --port 8000"`, `bash -c "vllm serve m --api-key <redacted> --port 8000"`},
		{"nested command in a variable", `ARGS="--api-key sk-abc --port 8000"; vllm serve m $ARGS`, `ARGS="--api-key <redacted> --port 8000"; vllm serve m $ARGS`},
		{"comment", "vllm serve m # old: --api-key sk-abc\n", "vllm serve m # old: --api-key <redacted>\n"},
		{"comment with a header-like key", "vllm serve m # key: sk-abc, the old one\n", "vllm serve m # key: <redacted>\n"},
		{"comment with assignment", "vllm serve m # HF_TOKEN=hf_abc was here\n", "vllm serve m # HF_TOKEN=<redacted>\n"},
		{"heredoc", "cat >env <<EOF\nHF_TOKEN=abc\nX=1\nEOF\n", "cat >env <<EOF\nHF_TOKEN=<redacted>\nX=1\nEOF\n"},
		{"command substitution value", "vllm serve m --api-key $(cat ~/.key) --port 1", "vllm serve m --api-key <redacted> --port 1"},
		{"inside a command substitution", `X=$(vllm serve m --api-key sk-abc)`, `X=$(vllm serve m --api-key <redacted>)`},
		{"default of a secret variable", "vllm serve m --api-key ${VLLM_API_KEY:-sk-abc}", "vllm serve m --api-key <redacted>"},
		{"default of a secret variable elsewhere", "echo ${HF_TOKEN:-hf_abc}", "echo ${HF_TOKEN:-<redacted>}"},
		{"pipeline and list", "HF_TOKEN=abc vllm serve m --api-key k1 2>&1 | tee log && echo --password p2", "HF_TOKEN=<redacted> vllm serve m --api-key <redacted> 2>&1 | tee log && echo --password <redacted>"},

		{"flag as a redirection's file", "cat < --api-key sk-abc", "cat < --api-key <redacted>"},
		{"key on the next line without a continuation", "vllm serve m --api-key\nsk-abc\n", "vllm serve m --api-key\n<redacted>\n"},
		{"flag before an assignment", "> --api-key A=b", "> --api-key <redacted>"},
		{"comment with NUL bytes", "#\x00\x00 --api-key sk-abc", "#\x00\x00 --api-key <redacted>"},
		{"escaped space before the flag", `echo \ --api-key sk-abc`, `echo \ --api-key <redacted>`},

		// References reveal nothing and stay; anything more is redacted.
		{"reference", `vllm serve m --api-key "$VLLM_API_KEY" --port 1`, `vllm serve m --api-key "$VLLM_API_KEY" --port 1`},
		{"braced reference", `vllm serve m --api-key ${VLLM_API_KEY} --hf-token=$HF_TOKEN`, `vllm serve m --api-key ${VLLM_API_KEY} --hf-token=$HF_TOKEN`},
		{"reference in assignment", `export HF_TOKEN="${HF_TOKEN}" VLLM_API_KEY=$KEY`, `export HF_TOKEN="${HF_TOKEN}" VLLM_API_KEY=$KEY`},
		{"reference in header", `curl -H "Authorization: Bearer $KEY" h`, `curl -H "Authorization: Bearer $KEY" h`},
		{"reference plus text", `vllm serve m --api-key "sk-$SUFFIX"`, `vllm serve m --api-key "<redacted>"`},
		{"two references", `vllm serve m --api-key $A$B`, `vllm serve m --api-key <redacted>`},
		{"single-quoted dollar is not a reference", `vllm serve m --api-key '$KEY'`, `vllm serve m --api-key '<redacted>'`},
		{"indirect expansion", `vllm serve m --api-key ${!NAME}`, `vllm serve m --api-key <redacted>`},

		// The fallback when the text is not shell.
		{"unbalanced quote swallows the rest", "vllm serve m --api-key sk'abc --port 8000\nnext line", "vllm serve m --api-key <redacted>"},
		{"unbalanced quote later", "vllm serve m --api-key sk-abc --port 8000\nnext 'line", "vllm serve m --api-key <redacted>\nnext 'line"},
		{"unbalanced quote, key on the next line", "vllm serve m --api-key \\\n sk-abc --x 'y\n", "vllm serve m --api-key \\\n <redacted>\n"},
		{"unbalanced, header", `curl -H "Authorization: Bearer sk-abc --x ( y`, `curl -H "Authorization: Bearer <redacted>`},
		{"unbalanced, assignment", "export HF_TOKEN=abc ( \\\n  --port 1", "export HF_TOKEN=<redacted> \\\n  --port 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Command(c.in)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Command(%q) (-want +got):\n%s", c.in, diff)
			}
			if parses(c.in) && !parses(got) {
				t.Errorf("Command(%q) = %q no longer parses as shell", c.in, got)
			}
		})
	}
}

func TestCommandResultSaysWhichPath(t *testing.T) {
	if r := CommandResult("vllm serve m --api-key k"); !r.Parsed || r.ParseErr != nil {
		t.Errorf("valid shell: %+v, want parsed", r)
	}
	r := CommandResult("vllm serve m --api-key 'k")
	if r.Parsed || r.ParseErr == nil || r.Text != "vllm serve m --api-key <redacted>" {
		t.Errorf("unbalanced quote: %+v, want the fallback", r)
	}
}

func TestCommandKnownValues(t *testing.T) {
	cases := []struct {
		name, in string
		known    []string
		want     string
	}{
		{"inside another word", `vllm serve m --model-loader-extra-config '{"x":"sk-abcdef"}'`, []string{"sk-abcdef"}, `vllm serve m --model-loader-extra-config '{"x":"<redacted>"}'`},
		{"several occurrences", "a sk-abcdef b xsk-abcdefx", []string{"sk-abcdef"}, "a <redacted> b x<redacted>x"},
		{"and a rule", "vllm serve m --api-key sk-abcdef # sk-abcdef", []string{"sk-abcdef"}, "vllm serve m --api-key <redacted> # <redacted>"},
		{"in the fallback", "echo 'sk-abcdef", []string{"sk-abcdef"}, "echo '<redacted>"},
		{"overlapping values", "xxabcdefyy", []string{"abcd", "cdef"}, "xx<redacted>yy"},
		{"trailing newline of a key file", "k=sk-abcdef v", []string{"sk-abcdef\n"}, "k=<redacted> v"},
		{"too short: ignored", "vllm serve m --port 8000", []string{"800", "", "   ", "m"}, "vllm serve m --port 8000"},
		{"four bytes: used", "vllm serve m --port 8000", []string{"8000"}, "vllm serve m --port <redacted>"},
		{"quoted value keeps its quotes", "vllm serve m --api-key 'sk-abcdef'", []string{"sk-abcdef"}, "vllm serve m --api-key '<redacted>'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Command(c.in, WithValues(c.known...))); diff != "" {
				t.Errorf("Command(%q, %q) (-want +got):\n%s", c.in, c.known, diff)
			}
		})
	}
}

// referenceLaunch is the launch command of the reference report, the key planted.
func referenceLaunch(t testing.TB, key string) string {
	b, err := os.ReadFile("testdata/reference-launch.sh")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(strings.TrimSpace(string(b)), "<redacted>", key, 1)
}

func TestCommandReference(t *testing.T) {
	const key = "sk-Ref3renceKey0123"
	line := referenceLaunch(t, key)
	script := "#!/bin/bash\nexport HF_TOKEN=hf_Ref3rence\n" + strings.ReplaceAll(line, " --", " \\\n  --") + "\n"
	for _, in := range []string{line, script} {
		got := Command(in)
		if strings.Contains(got, key) || strings.Contains(got, "hf_Ref3rence") {
			t.Errorf("Command kept a secret:\n%s", got)
		}
		want := strings.Replace(strings.Replace(in, key, Marker, 1), "hf_Ref3rence", Marker, 1)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Command changed more than the secrets (-want +got):\n%s", diff)
		}
	}
}

func TestArgs(t *testing.T) {
	cases := []struct {
		name      string
		in, known []string
		want      []string
	}{
		{"flag and value", []string{"vllm", "serve", "m", "--api-key", "sk-abc", "--port", "8000"}, nil,
			[]string{"vllm", "serve", "m", "--api-key", Marker, "--port", "8000"}},
		{"flag=value", []string{"vllm", "--api-key=sk abc", "--hf-token=x"}, nil, []string{"vllm", "--api-key=" + Marker, "--hf-token=" + Marker}},
		{"env-like", []string{"env", "HF_TOKEN=abc", "X=1", "--env=VLLM_API_KEY=k"}, nil, []string{"env", "HF_TOKEN=" + Marker, "X=1", "--env=VLLM_API_KEY=" + Marker}},
		{"header", []string{"curl", "-H", "Authorization: Bearer sk-abc"}, nil, []string{"curl", "-H", "Authorization: Bearer " + Marker}},
		{"references stay", []string{"vllm", "--api-key", "${VLLM_API_KEY}", "--hf-token", "$HF", "K_TOKEN=${X}"}, nil,
			[]string{"vllm", "--api-key", "${VLLM_API_KEY}", "--hf-token", "$HF", "K_TOKEN=${X}"}},
		{"not secrets", []string{"vllm", "--max-num-batched-tokens", "8192", "--tokenizer", "x", "--hf-token", "--port", "1"}, nil,
			[]string{"vllm", "--max-num-batched-tokens", "8192", "--tokenizer", "x", "--hf-token", "--port", "1"}},
		{"a command in an element", []string{"bash", "-c", "vllm serve m --api-key sk-abc --port 1"}, nil,
			[]string{"bash", "-c", "vllm serve m --api-key " + Marker + " --port 1"}},
		{"known value", []string{"vllm", "--extra", `{"k":"sk-abcdef"}`, "sk-abcdef"}, []string{"sk-abcdef"},
			[]string{"vllm", "--extra", `{"k":"` + Marker + `"}`, Marker}},
		{"nil", nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]string(nil), c.in...)
			if diff := cmp.Diff(c.want, Args(c.in, WithValues(c.known...))); diff != "" {
				t.Errorf("Args(%q) (-want +got):\n%s", c.in, diff)
			}
			if diff := cmp.Diff(in, c.in); diff != "" {
				t.Errorf("Args changed its argument:\n%s", diff)
			}
		})
	}
}

func TestEnv(t *testing.T) {
	in := map[string]string{"HF_TOKEN": "hf_abc", "VLLM_API_KEY": "k", "DB_PASSWORD": "p", "AWS_SECRET_ACCESS_KEY": "s",
		"VLLM_USE_FLASHINFER_MOE_FP4": "1", "EMPTY_TOKEN": "", "REF_KEY": "${VLLM_API_KEY}", "LOG": "key is sk-abcdef"}
	want := map[string]string{"HF_TOKEN": Marker, "VLLM_API_KEY": Marker, "DB_PASSWORD": Marker, "AWS_SECRET_ACCESS_KEY": Marker,
		"VLLM_USE_FLASHINFER_MOE_FP4": "1", "EMPTY_TOKEN": "", "REF_KEY": "${VLLM_API_KEY}", "LOG": "key is " + Marker}
	if diff := cmp.Diff(want, Env(in, WithValues("sk-abcdef"))); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
	if in["HF_TOKEN"] != "hf_abc" {
		t.Errorf("Env changed its argument")
	}
	if Env(nil) != nil {
		t.Errorf("Env(nil) is not nil")
	}
}

func TestText(t *testing.T) {
	cases := []struct {
		in    string
		known []string
		want  string
	}{
		{`POST /v1/completions: 401 {"error":"bad key sk-abcdef"}`, []string{"sk-abcdef"}, `POST /v1/completions: 401 {"error":"bad key <redacted>"}`},
		{"--api-key sk-abcdef", nil, "--api-key sk-abcdef"}, // Text applies known values only
		{"abc", []string{"abc"}, "abc"},                     // too short
		{"a sk-1 b sk-22 c", []string{"sk-1", "sk-22"}, "a <redacted> b <redacted> c"},
	}
	for _, c := range cases {
		if got := Text(c.in, c.known...); got != c.want {
			t.Errorf("Text(%q, %q) = %q, want %q", c.in, c.known, got, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	for name, want := range map[string]bool{
		"--api-key": true, "api_key": true, "--hf-token": true, "--secret-file": true, "--password": true, "X-Api-Key": true,
		"--apikey": true, "--db.passwd": true, "--credentials": true,
		"--max-num-batched-tokens": false, "--tokenizer": false, "--tokenizer-mode": false, "--port": false, "--keyboard": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]bool{
		"HF_TOKEN": true, "VLLM_API_KEY": true, "MYTOKEN": true, "db_password": true, "AWS_SECRET_ACCESS_KEY": true, "GOOGLE_CREDENTIALS": true,
		"VLLM_USE_V2_MODEL_RUNNER": false, "PORT": false, "CUDA_VISIBLE_DEVICES": false,
	} {
		if got := IsSecretVar(name); got != want {
			t.Errorf("IsSecretVar(%q) = %v, want %v", name, got, want)
		}
	}
}
