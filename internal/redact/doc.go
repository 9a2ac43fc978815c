// Package redact removes secrets from text that speedmatrix records or prints: the server's
// launch command (a shell script, or an argument list from the config file), its environment,
// and any log line or error message that might hold the API key. It must not leak a secret it
// was able to recognise, and it must not change anything but the secret: a redacted launch
// command keeps its lines, comments, quoting and continuation lines byte for byte, so that the
// recorded command can still be read and rerun once a key is put back.
//
// It does no I/O and reads no environment: the caller passes the secret values it knows.
//
// # API
//
//	redact.Command(script, redact.WithValues(os.Getenv("VLLM_API_KEY")))  // a shell command or script
//	redact.CommandResult(script, ...)  // the same, saying whether the shell parser or the fallback ran
//	redact.Args([]string{"vllm", "serve", "m", "--api-key", key}, ...)   // an argument list
//	redact.Env(map[string]string{"HF_TOKEN": "hf_…"})                  // an environment
//	redact.Text(logLine, key)                                          // known values only
//
// Every secret is replaced by [Marker], "<redacted>".
//
// # What counts as a secret
//
//   - The value of a secret-looking flag: one whose name has a word (split at - _ .) key,
//     apikey, token, secret, password, passwd, credential or credentials ([IsSecretName]): the
//     next word of --api-key X and --hf-token X, and the part after = of --api-key=X. So
//     --max-num-batched-tokens 8192 and --tokenizer x stay. The value is the next word of the
//     text whatever the syntax between (a continuation line, a newline, a redirection), as a
//     person would read it, unless it starts with "--" (vLLM's --hf-token may stand alone); a
//     word that starts with a single dash is taken as the value.
//   - The value of a secret-looking variable, wherever it is assigned: export HF_TOKEN=…,
//     HF_TOKEN=… vllm serve, env VLLM_API_KEY=… cmd, docker's -e HF_TOKEN=…, --env=VLLM_API_KEY=…,
//     and the default of ${HF_TOKEN:-…}. A variable is secret-looking when its name holds TOKEN,
//     KEY, SECRET, PASSWORD, PASSWD or CREDENTIAL anywhere, in any case ([IsSecretVar]); so
//     TOKENIZERS_PARALLELISM is redacted too, which costs nothing but a harmless value.
//   - The value of an Authorization or Proxy-Authorization header (any case, after an optional
//     scheme such as Bearer, which is kept) and of any header whose name is secret-looking
//     (X-Api-Key: …), and a JSON-style "hf_token": … member.
//   - Every occurrence of a known secret value passed with [WithValues] (or to [Text]),
//     wherever it appears, inside other words too. A known value shorter than [MinKnownLen] (4)
//     bytes, or only white space, is not searched for: it would match inside unrelated words and
//     redact the whole command. Such a value is still redacted where the rules above find it.
//     A value with surrounding white space is also searched for without it (a key read from a
//     file often ends in a newline).
//
// A value that is exactly one parameter expansion, $NAME or ${NAME} (quoted or not), is kept:
// it names where the secret comes from and reveals nothing. Anything else is redacted, including
// ${KEY:-default}, $(cat key.txt), "$A$B" and a single-quoted '$KEY' (which is not an expansion).
//
// # How a command is read
//
// The command is parsed as bash by mvdan.cc/sh/v3/syntax, the parser behind shfmt, so words are
// what the shell would see: a key on the line after "--api-key \", a quoted key with spaces in
// it ('sk x'), a header in double quotes. Each secret value is located as a byte range of the
// original text and only that range is replaced. When the value began inside quotes that the
// range removes, the closing quote is put back after the marker (--api-key '<redacted>'), so
// the result is still valid shell. Quoted strings that hold white space (bash -c "…",
// ARGS="--api-key …") are also scanned as text by the fallback's scanner below, since they are
// often commands themselves; comments and here-documents are scanned the same way.
//
// When the text does not parse as shell (an unbalanced quote, a stray parenthesis), a
// conservative scanner runs instead ([Result].Parsed is false): it splits the text into words
// both respecting quotes and ignoring them, applies the same rules to both, and redacts each
// value found from its start to the end of its line (at least to the end of its word), so that
// a quoting mistake can cost some of the command but not the key. Known values are replaced
// on both paths.
//
// Unquoted markers (--api-key <redacted>) read as redirections to a shell; that is deliberate
// (it is the form the reference report records) and the command is not meant to run with a
// marker in place of a key: put the key back and it runs as written.
//
// # Tests
//
// TestCommand holds a case for every layout; FuzzRedact plants an API-key-like value in each of
// them (and in layouts only a known value finds) at random places of a launch script and of the
// reference report's one-line command, and checks that it never survives, that the lines stay
// and that the result still parses; FuzzRedactCommand puts a secret after --api-key behind
// arbitrary text, shell or not. Both run in .ci/run.
package redact
