package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SpecConfigFlag is vLLM's flag of the speculative-decoding configuration (a JSON object).
const SpecConfigFlag = "--speculative-config"

// PinAcceptance returns argv serving with speculative acceptance pinned at length l: vLLM's
// --speculative-config JSON gets "rejection_sample_method": "synthetic" and
// "synthetic_acceptance_length": l, its other keys kept. Both names are vLLM's SpeculativeConfig
// fields (vllm/config/speculative.py; https://docs.vllm.ai/en/latest/api/vllm/config/speculative.html):
// rejection_sample_method chooses standard, synthetic or block verification, and synthetic
// accepts drafts at the decaying per-position rates that give synthetic_acceptance_length, the
// mean tokens per draft step counting the target's own token, so that a benchmark's speed no
// longer depends on how well the draft guesses this run. `speedmatrix sim` reads the same keys.
//
// The flag is found as two arguments (--speculative-config JSON), as one
// (--speculative-config=JSON), or inside one argument that is a shell command line (bash -c
// "vllm serve … --speculative-config '{…}'"), its value bare, single- or double-quoted; the
// rewritten value is quoted the same way there. When no argument names the flag, it is appended
// with only the two keys (vLLM then needs the method elsewhere; the simulator does not).
// argv itself is not changed.
func PinAcceptance(argv []string, l float64) ([]string, error) {
	if !(l >= 1) || math.IsInf(l, 0) {
		return nil, fmt.Errorf("pinned acceptance length %g: want at least 1 (tokens per draft step, counting the target's own token)", l)
	}
	out := append([]string(nil), argv...)
	for i, a := range out {
		switch {
		case a == SpecConfigFlag:
			if i+1 >= len(out) {
				return nil, fmt.Errorf("%s is the last argument: give it a JSON object", SpecConfigFlag)
			}
			v, err := pinJSON(out[i+1], l)
			if err != nil {
				return nil, err
			}
			out[i+1] = v
			return out, nil
		case strings.HasPrefix(a, SpecConfigFlag+"="):
			v, err := pinJSON(strings.TrimPrefix(a, SpecConfigFlag+"="), l)
			if err != nil {
				return nil, err
			}
			out[i] = SpecConfigFlag + "=" + v
			return out, nil
		case strings.Contains(a, SpecConfigFlag+" ") || strings.Contains(a, SpecConfigFlag+"="):
			v, err := pinShell(a, l)
			if err != nil {
				return nil, err
			}
			out[i] = v
			return out, nil
		}
	}
	v, err := pinJSON("{}", l)
	if err != nil {
		return nil, err
	}
	return append(out, SpecConfigFlag, v), nil
}

// pinJSON returns the JSON object s with acceptance pinned at l, keys sorted, numbers kept.
func pinJSON(s string, l float64) (string, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		if err == nil {
			err = errors.New("null")
		}
		return "", fmt.Errorf("%s %s: not a JSON object (%v); spec_decode: pinned rewrites it, so it must be JSON (a ${NAME} only inside a string)", SpecConfigFlag, s, err)
	}
	if dec.More() {
		return "", fmt.Errorf("%s %s: more than one JSON value", SpecConfigFlag, s)
	}
	delete(m, "synthetic_acceptance_rates") // synthetic_acceptance_length decides
	m["rejection_sample_method"] = "synthetic"
	m["synthetic_acceptance_length"] = json.Number(strconv.FormatFloat(l, 'f', -1, 64))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// pinShell rewrites the --speculative-config value inside a shell command line.
func pinShell(cmd string, l float64) (string, error) {
	i := strings.Index(cmd, SpecConfigFlag)
	j := i + len(SpecConfigFlag)
	if j < len(cmd) && cmd[j] == '=' {
		j++
	} else {
		for j < len(cmd) && cmd[j] == ' ' {
			j++
		}
	}
	word, end, quote, err := shellWordAt(cmd, j)
	if err != nil {
		return "", fmt.Errorf("%s in %q: %w", SpecConfigFlag, cmd, err)
	}
	v, err := pinJSON(word, l)
	if err != nil {
		return "", err
	}
	switch quote {
	case '"':
		v = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`").Replace(v) + `"`
	default: // single-quoted or bare: single quotes (the JSON holds none but in its strings)
		v = "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
	}
	return cmd[:j] + v + cmd[end:], nil
}

// shellWordAt reads the shell word starting at cmd[i]: its unquoted value, where it ends, and
// the quote it was written in (0 for bare).
func shellWordAt(cmd string, i int) (word string, end int, quote byte, err error) {
	if i >= len(cmd) {
		return "", 0, 0, errors.New("no value")
	}
	switch cmd[i] {
	case '\'':
		k := strings.IndexByte(cmd[i+1:], '\'')
		if k < 0 {
			return "", 0, 0, errors.New("an unclosed single quote")
		}
		return cmd[i+1 : i+1+k], i + 2 + k, '\'', nil
	case '"':
		var b strings.Builder
		for k := i + 1; k < len(cmd); k++ {
			switch c := cmd[k]; c {
			case '\\':
				if k+1 < len(cmd) && strings.IndexByte("\"\\$`", cmd[k+1]) >= 0 {
					k++
					b.WriteByte(cmd[k])
				} else {
					b.WriteByte(c)
				}
			case '"':
				return b.String(), k + 1, '"', nil
			default:
				b.WriteByte(c)
			}
		}
		return "", 0, 0, errors.New("an unclosed double quote")
	}
	k := strings.IndexAny(cmd[i:], " \t\n;&|")
	if k < 0 {
		return cmd[i:], len(cmd), 0, nil
	}
	return cmd[i : i+k], i + k, 0, nil
}
