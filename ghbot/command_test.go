package ghbot

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/speedmatrix/speedmatrix/results"
)

func TestParseCommand(t *testing.T) {
	decode := func(ctx string, c int) results.CellID {
		return results.CellID{Phase: results.PhaseDecode, ContextLabel: ctx, Concurrency: c}
	}
	prefill := func(ctx string) results.CellID { return results.CellID{Phase: results.PhasePrefill, ContextLabel: ctx} }
	tests := []struct {
		name    string
		body    string
		want    Command
		notCmd  bool   // ErrNotCommand
		wantErr string // a *CommandError containing this
	}{
		{name: "bare", body: "/bench", want: Command{Kind: CommandRun}},
		{name: "trailing blanks and CRLF", body: "/bench  \r\n", want: Command{Kind: CommandRun}},
		{name: "capitalised by a phone", body: "/Bench", want: Command{Kind: CommandRun}},
		{name: "after prose", body: "Looks good to me.\n\n/bench\nthanks", want: Command{Kind: CommandRun}},
		{name: "indented", body: "  /bench rerun", want: Command{Kind: CommandRerun}},
		{name: "help", body: "/bench help", want: Command{Kind: CommandHelp}},
		{name: "rerun cells comma", body: "/bench rerun decode/8K/32,prefill/16K", want: Command{Kind: CommandRerun, Cells: []results.CellID{decode("8K", 32), prefill("16K")}}},
		{name: "rerun cells blanks and duplicates", body: "/bench rerun decode/8K/32, 8K/32  prefill/16K", want: Command{Kind: CommandRerun, Cells: []results.CellID{decode("8K", 32), prefill("16K")}}},
		{name: "tab separated", body: "/bench\trerun\tdecode/8K/32", want: Command{Kind: CommandRerun, Cells: []results.CellID{decode("8K", 32)}}},
		{name: "accept plain", body: "/bench accept the fix costs 2 %", want: Command{Kind: CommandAccept, Reason: "the fix costs 2 %"}},
		{name: "accept quoted", body: `/bench accept "known, see #12"`, want: Command{Kind: CommandAccept, Reason: "known, see #12"}},
		{name: "accept single quoted", body: `/bench accept 'ok'`, want: Command{Kind: CommandAccept, Reason: "ok"}},
		{name: "accept curly quoted", body: "/bench accept “ok then”", want: Command{Kind: CommandAccept, Reason: "ok then"}},
		{name: "accept inner quotes kept", body: `/bench accept it's "fine"`, want: Command{Kind: CommandAccept, Reason: `it's "fine"`}},
		{name: "paired", body: "/bench paired", want: Command{Kind: CommandPaired}},
		{name: "paired capitalised", body: "/Bench PAIRED", want: Command{Kind: CommandPaired}},
		{name: "paired cells", body: "/bench paired decode/8K/32, prefill/16K decode/8K/32", want: Command{Kind: CommandPaired, Cells: []results.CellID{decode("8K", 32), prefill("16K")}}},

		{name: "three blanks still a line start", body: "   /bench", want: Command{Kind: CommandRun}},
		{name: "with a commit", body: "/bench 1A2B3C4d", want: Command{Kind: CommandRun, SHA: "1a2b3c4d"}},
		{name: "with a full commit", body: "/bench ec26c3e57ca3a959ca5aad62de7213c562f8c821", want: Command{Kind: CommandRun, SHA: "ec26c3e57ca3a959ca5aad62de7213c562f8c821"}},
		{name: "accept with a commit", body: "/bench accept ec26c3e the fix costs 2 %", want: Command{Kind: CommandAccept, SHA: "ec26c3e", Reason: "the fix costs 2 %"}},
		{name: "accept drops bidi controls", body: "/bench accept ok \u202eexe.txt\u202c", want: Command{Kind: CommandAccept, Reason: "ok exe.txt"}},
		{name: "accept whose reason starts with a short word", body: "/bench accept facade is slower", want: Command{Kind: CommandAccept, Reason: "facade is slower"}},

		{name: "no command", body: "LGTM, ship it", notCmd: true},
		// GitHub renders these as code (or as the paragraph's text), not as a line of their own.
		{name: "indented code block", body: "Run it so:\n\n    /bench\n", notCmd: true},
		{name: "tab-indented code block", body: "\t/bench accept x", notCmd: true},
		{name: "paragraph continuation", body: "please\n    /bench", notCmd: true},
		{name: "an indented fence opens nothing", body: "    ```\n/bench", want: Command{Kind: CommandRun}},
		{name: "empty", body: "", notCmd: true},
		{name: "benchmark is not ours", body: "/benchmark", notCmd: true},
		{name: "mid-line mention", body: "please run /bench later", notCmd: true},
		{name: "quoted reply", body: "> /bench\nwhy?", notCmd: true},
		{name: "inside a code block", body: "Use it like this:\n```\n/bench rerun decode/8K/32\n```\n", notCmd: true},
		{name: "inside a tilde block", body: "~~~text\n/bench\n~~~", notCmd: true},

		{name: "unknown", body: "/bench please", wantErr: "Unknown command `/bench please`"},
		// The reply quotes the word in a code span, so a mention or HTML in it does nothing.
		{name: "unknown mention stays in code", body: "/bench @org/team", wantErr: "Unknown command `/bench @org/team`."},
		{name: "backticks cannot end the code span", body: "/bench a`@org/team`<b>", wantErr: "Unknown command `/bench a@org/team<b>`."},
		{name: "accept without reason", body: "/bench accept", wantErr: "needs a reason"},
		{name: "accept empty quotes", body: `/bench accept ""`, wantErr: "needs a reason"},
		{name: "accept too long", body: "/bench accept " + strings.Repeat("x", MaxReasonLen+1), wantErr: "keep it under"},
		{name: "bad cell", body: "/bench rerun decode/8K", wantErr: "`/bench rerun`: `decode/8K` is not a cell (want prefill/CTX or decode/CTX/CONCURRENCY"},
		{name: "a mention as a cell stays in code", body: "/bench rerun @org/team", wantErr: "`/bench rerun`: `@org/team` is not a cell"},
		{name: "bad concurrency", body: "/bench rerun decode/8K/0", wantErr: "`decode/8K/0` is not a cell"},
		{name: "a mention as a context stays in code", body: "/bench rerun @team/1", wantErr: "`/bench rerun`: `@team/1` is not a cell (want"},
		{name: "paired bad cell", body: "/bench paired blocks=6", wantErr: "`/bench paired`: `blocks=6` is not a cell (want prefill/CTX or decode/CTX/CONCURRENCY"},
		{name: "paired mention stays in code", body: "/bench paired @org/team", wantErr: "`/bench paired`: `@org/team` is not a cell"},
		{name: "help with args", body: "/bench help me", wantErr: "takes no arguments"},
		{name: "two commands", body: "/bench\n/bench accept x", wantErr: "2 /bench lines"},
		{name: "a commit then more", body: "/bench 1a2b3c4 rerun", wantErr: "takes nothing after the commit"},
		{name: "accept with a commit and no reason", body: "/bench accept 1a2b3c4", wantErr: "needs a reason"},
		{name: "six hex digits are no commit", body: "/bench 1a2b3c", wantErr: "Unknown command"},
		{name: "command after a closed fence", body: "```\nx\n```\n/bench nope", wantErr: "Unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCommand(tt.body)
			switch {
			case tt.notCmd:
				if !errors.Is(err, ErrNotCommand) {
					t.Fatalf("ParseCommand(%q) = %+v, %v; want ErrNotCommand", tt.body, got, err)
				}
			case tt.wantErr != "":
				var ce *CommandError
				if !errors.As(err, &ce) {
					t.Fatalf("ParseCommand(%q) = %+v, %v; want a *CommandError", tt.body, got, err)
				}
				if !strings.Contains(err.Error(), tt.wantErr) || !strings.HasSuffix(err.Error(), HelpText) {
					t.Errorf("error %q: want it to contain %q and end with the help", err, tt.wantErr)
				}
			default:
				if err != nil {
					t.Fatalf("ParseCommand(%q): %v", tt.body, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParseCommand(%q) (-want +got):\n%s", tt.body, diff)
				}
			}
		})
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/bench", "/bench rerun decode/8K/32,prefill/16K", `/bench accept "why"`, "/bench help",
		"```\n/bench\n```", "/benchmark", "x\n/bench accept “a”", "/bench rerun 8K/1 8K/1", "/BENCH\tRERUN",
		"/bench paired", "/bench paired decode/8K/32,prefill/16K", "/bench paired blocks=6", "/bench\tpaired\t8K/1", "/bench 1a2b3c4", "/bench accept 1a2b3c4 why", "    /bench", "\t/bench"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		cmd, err := ParseCommand(body)
		var ce *CommandError
		switch {
		case errors.Is(err, ErrNotCommand):
			return
		case errors.As(err, &ce):
			if !strings.HasSuffix(err.Error(), HelpText) {
				t.Fatalf("error without the help: %q", err)
			}
			// Comment text reaches the reply only inside code spans: no mention, link or HTML.
			for i, part := range strings.Split(ce.Problem, "`") {
				if i%2 == 0 && strings.ContainsAny(part, "@<[") {
					t.Fatalf("problem %q quotes text outside a code span", ce.Problem)
				}
			}
			return
		case err != nil:
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
		switch cmd.Kind {
		case CommandRun, CommandHelp:
			if cmd.SHA != "" && (cmd.Kind != CommandRun || !commandSHA(cmd.SHA) || cmd.SHA != strings.ToLower(cmd.SHA)) {
				t.Fatalf("commit %q", cmd.SHA)
			}
			if cmd.Reason != "" || len(cmd.Cells) != 0 {
				t.Fatalf("%s with arguments: %+v", cmd.Kind, cmd)
			}
		case CommandRerun, CommandPaired:
			seen := map[results.CellID]bool{}
			for _, c := range cmd.Cells {
				back, err := results.ParseCellID(c.String())
				if err != nil || back != c || seen[c] {
					t.Fatalf("cell %v does not round-trip or repeats: %v", c, err)
				}
				seen[c] = true
			}
		case CommandAccept:
			if strings.TrimSpace(cmd.Reason) == "" || strings.ContainsAny(cmd.Reason, "\n\r\x00\u202e\u2066") {
				t.Fatalf("accept reason %q", cmd.Reason)
			}
		default:
			t.Fatalf("kind %q", cmd.Kind)
		}
	})
}
