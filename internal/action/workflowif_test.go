package action

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecideGateAssociation (issue 34.6): the example workflows start the decide job, the
// first that holds a write token, on a comment only when its author is the repository's owner,
// a member or a collaborator (author_association), so that any other user's /bench flood starts
// no job; everything else that starts decide still does. The job's if: is evaluated as GitHub
// evaluates it, on the events below.
func TestDecideGateAssociation(t *testing.T) {
	comment := func(assoc, body string, onPR bool) map[string]any {
		issue := map[string]any{"number": 2}
		if onPR {
			issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/o/r/pulls/2"}
		}
		return map[string]any{"event_name": "issue_comment", "repository": "vllm-project/vllm",
			"event": map[string]any{"issue": issue, "comment": map[string]any{"body": body, "author_association": assoc}}}
	}
	cases := []struct {
		name string
		ctx  map[string]any
		want bool
	}{
		{"/bench by the owner", comment("OWNER", "/bench", true), true},
		{"/bench by a member", comment("MEMBER", "LGTM\n/bench accept ok", true), true},
		{"/bench by a collaborator", comment("COLLABORATOR", "/bench", true), true},
		{"/bench by a contributor", comment("CONTRIBUTOR", "/bench", true), false},
		{"/bench by a first-time contributor", comment("FIRST_TIME_CONTRIBUTOR", "/bench", true), false},
		{"/bench by anyone", comment("NONE", "/bench", true), false},
		{"/bench bisect by anyone on an issue", comment("NONE", "/bench bisect", false), false},
		{"/bench bisect by a member on an issue", comment("MEMBER", "/bench bisect", false), true},
		{"a member's comment without a command", comment("MEMBER", "LGTM", true), false},
		{"a fork's pull request", map[string]any{"event_name": "pull_request_target", "repository": "vllm-project/vllm"}, true},
		{"a push", map[string]any{"event_name": "push", "repository": "vllm-project/vllm"}, true},
		{"the original repository", map[string]any{"event_name": "push", "repository": "speedmatrix/speedmatrix"}, false},
	}
	for _, name := range []string{"example-gpu.yml", "example-gpu-sharded.yml"} {
		t.Run(name, func(t *testing.T) {
			w, _ := readWorkflow(t, filepath.Join("../../.github/workflows", name))
			cond := w.Jobs["decide"].If
			if cond == "" {
				t.Fatal("the decide job has no if:")
			}
			for _, tc := range cases {
				got, err := evalIf(cond, map[string]any{"github": tc.ctx})
				if err != nil {
					t.Fatalf("%s: %v", cond, err)
				}
				if got != tc.want {
					t.Errorf("%s: the decide job runs: %v, want %v", tc.name, got, tc.want)
				}
			}
		})
	}
}

// evalIf evaluates a workflow if: expression (the subset the example workflows use: literals,
// context paths, ! == != && || and parentheses, contains and fromJSON) in ctx, as GitHub does:
// strings compare ignoring case, and the result is the value's truthiness.
func evalIf(expr string, ctx map[string]any) (bool, error) {
	p := &ifParser{src: expr, ctx: ctx}
	p.next()
	v, err := p.or()
	if err != nil {
		return false, err
	}
	if p.tok != "" {
		return false, fmt.Errorf("unexpected %q", p.tok)
	}
	return truthy(v), nil
}

type ifParser struct {
	src string
	pos int
	tok string // the current token; "" at the end
	ctx map[string]any
}

func (p *ifParser) next() {
	for p.pos < len(p.src) && strings.ContainsRune(" \t\n\r", rune(p.src[p.pos])) {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	rest := p.src[p.pos:]
	for _, op := range []string{"==", "!=", "&&", "||", "!", "(", ")", ","} {
		if strings.HasPrefix(rest, op) {
			p.tok, p.pos = op, p.pos+len(op)
			return
		}
	}
	if rest[0] == '\'' {
		i := 1
		for i < len(rest) {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i += 2
					continue
				}
				break
			}
			i++
		}
		p.tok, p.pos = rest[:i+1], p.pos+i+1
		return
	}
	i := 0
	for i < len(rest) && (rest[i] == '_' || rest[i] == '.' || rest[i] == '-' || rest[i] >= 'a' && rest[i] <= 'z' || rest[i] >= 'A' && rest[i] <= 'Z' || rest[i] >= '0' && rest[i] <= '9') {
		i++
	}
	if i == 0 {
		i = 1
	}
	p.tok, p.pos = rest[:i], p.pos+i
}

func (p *ifParser) or() (any, error) {
	v, err := p.and()
	for err == nil && p.tok == "||" {
		p.next()
		var r any
		if r, err = p.and(); !truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *ifParser) and() (any, error) {
	v, err := p.unary()
	for err == nil && p.tok == "&&" {
		p.next()
		var r any
		if r, err = p.unary(); truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *ifParser) unary() (any, error) {
	if p.tok == "!" {
		p.next()
		v, err := p.unary()
		return !truthy(v), err
	}
	l, err := p.primary()
	if err != nil || (p.tok != "==" && p.tok != "!=") {
		return l, err
	}
	op := p.tok
	p.next()
	r, err := p.primary()
	return equal(l, r) == (op == "=="), err
}

func (p *ifParser) primary() (any, error) {
	tok := p.tok
	switch {
	case tok == "(":
		p.next()
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.tok != ")" {
			return nil, fmt.Errorf("want ) at %q", p.tok)
		}
		p.next()
		return v, nil
	case strings.HasPrefix(tok, "'"):
		p.next()
		return strings.ReplaceAll(tok[1:len(tok)-1], "''", "'"), nil
	case tok == "true" || tok == "false":
		p.next()
		return tok == "true", nil
	case tok == "":
		return nil, fmt.Errorf("unexpected end")
	}
	p.next()
	if p.tok != "(" {
		var v any = p.ctx
		for _, k := range strings.Split(tok, ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		return v, nil
	}
	p.next()
	var args []any
	for p.tok != ")" {
		a, err := p.or()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if p.tok == "," {
			p.next()
		} else if p.tok != ")" {
			return nil, fmt.Errorf("want , or ) at %q", p.tok)
		}
	}
	p.next()
	switch {
	case tok == "contains" && len(args) == 2:
		if list, ok := args[0].([]any); ok {
			for _, x := range list {
				if equal(x, args[1]) {
					return true, nil
				}
			}
			return false, nil
		}
		return strings.Contains(strings.ToLower(fmt.Sprint(args[0])), strings.ToLower(fmt.Sprint(args[1]))), nil
	case tok == "fromJSON" && len(args) == 1:
		var v any
		s, _ := args[0].(string)
		return v, json.Unmarshal([]byte(s), &v)
	}
	return nil, fmt.Errorf("function %s with %d arguments is not evaluated here", tok, len(args))
}

// truthy is GitHub's coercion to a boolean.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0
	}
	return true
}

// equal is ==: strings ignoring case; values of other kinds by their text.
func equal(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return strings.EqualFold(as, bs)
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}
