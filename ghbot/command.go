package ghbot

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/results"
)

// CommandKind names what a /bench comment asks for.
type CommandKind string

// The commands a PR comment can give.
const (
	CommandRun    CommandKind = "run"    // /bench [sha]
	CommandRerun  CommandKind = "rerun"  // /bench rerun [cells]
	CommandAccept CommandKind = "accept" // /bench accept [sha] <reason>
	CommandHelp   CommandKind = "help"   // /bench help
	CommandPaired CommandKind = "paired" // /bench paired [cells]
	CommandBisect CommandKind = "bisect" // /bench bisect [good..bad], on the change-point issue
)

// MaxReasonLen is the longest reason /bench accept takes, in characters; the reason is quoted in
// the PR comment and the check run, so it must stay short.
const MaxReasonLen = 500

// maxQuote is the most characters of a comment that a reply quotes.
const maxQuote = 40

// Command is a parsed /bench comment.
type Command struct {
	Kind CommandKind
	// Cells are the cells /bench rerun or /bench paired names, in the order given, without
	// duplicates; empty means the cells the last comparison could not decide (rerun) or the
	// configured matrix (paired).
	Cells []results.CellID
	// Reason is the text of /bench accept, without surrounding quotes.
	Reason string
	// SHA is the commit the command names (/bench <sha>, /bench accept <sha> <reason>): at least
	// MinSHALen hex digits, lower-cased, the commit the commenter read or a prefix of it; empty
	// for the bare form. The bare form and a prefix pin the head only if no push came after the
	// comment (Decide); the full id pins it whenever it is still the head.
	SHA string
	// Good and Bad are the range /bench bisect names (commit prefixes of at least MinSHALen hex
	// digits, lower-cased); both empty for the change point's own range.
	Good, Bad string
}

// MinSHALen is the fewest hex digits a commit named in a command may have.
const MinSHALen = 7

var cmdSHARE = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)

// commandSHA reports whether word names a commit: MinSHALen to 64 hex digits.
func commandSHA(word string) bool { return cmdSHARE.MatchString(word) }

// ErrNotCommand is returned by ParseCommand for a comment without a /bench line: such comments
// are ignored, never answered.
var ErrNotCommand = errors.New("not a /bench command")

// CommandError is a /bench line that is unknown or malformed. Its Error text explains the problem
// and carries the help, so it can be posted as the reply.
type CommandError struct {
	Problem string
}

// Error returns the problem followed by the help.
func (e *CommandError) Error() string {
	return e.Problem + "\n\n" + HelpText
}

// HelpText lists the commands; it is the reply to /bench help and to any malformed command.
const HelpText = "speedmatrix commands (post one as a comment on the pull request; only users with write or admin permission may run them):\n" +
	"- `/bench <commit>` measures that commit against its base, if it is still the pull request's head: name the commit you read by its full 40-digit id (e.g. `/bench 1a2b3c4d5e6f70819a2b3c4d5e6f70819a2b3c4d`). A shorter prefix (at least 7 hex digits), or `/bench` alone, is taken only if nothing was pushed to the head's repository after your comment.\n" +
	"- `/bench rerun` measures again the cells the last comparison could not decide; `/bench rerun decode/8K/32,prefill/16K` measures the cells named.\n" +
	"- `/bench paired` builds the base (the merge-base) on the GPU runner too and measures base and head alternately in blocks (ABBA), for changes the stored baseline cannot decide; `/bench paired decode/8K/32` measures the cells named.\n" +
	"- `/bench accept <commit> <reason>` accepts the slowdown that blocks at that commit (❌ a regression, or ❓ not proven), if it is still the head, named by its full id as for `/bench <commit>` (`/bench accept <reason>` for the head if nothing was pushed after your comment): the check turns green and the comment records who, when and why; a new push voids it.\n" +
	"- `/bench bisect` (on the change-point issue, not a pull request) measures the commits between the issue's last good and first bad results until it names the first bad one; `/bench bisect <good>..<bad>` bisects that range of the default branch.\n" +
	"- `/bench help` shows this list."

// ParseCommand reads the /bench command of a comment body. Only a line whose first word is
// "/bench" counts, as GitHub renders it at the start of a line: after at most 3 columns of
// blanks (4 or more make an indented code block, or continue the paragraph above), outside
// fenced code blocks, any letter case; a comment without one returns ErrNotCommand
// ("/benchmark" is not ours). A second /bench line, an unknown
// subcommand, a malformed cell or an empty reason return a *CommandError whose text is the help.
func ParseCommand(body string) (Command, error) {
	var lines []string
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimLeft(line, " \t")
		if indentWidth(line) >= 4 {
			// Indented code, or a lazy continuation of a paragraph: never a fence, never a
			// command line of its own.
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, f[:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		word, _, _ := strings.Cut(trimmed, " ")
		word, _, _ = strings.Cut(word, "\t")
		if strings.EqualFold(word, "/bench") {
			lines = append(lines, trimmed)
		}
	}
	switch len(lines) {
	case 0:
		return Command{}, ErrNotCommand
	case 1:
	default:
		return Command{}, &CommandError{Problem: fmt.Sprintf("The comment holds %d /bench lines; post one command per comment.", len(lines))}
	}
	return parseLine(lines[0])
}

// indentWidth returns the columns of blanks that start line, a tab advancing to the next
// multiple of 4 as CommonMark counts it.
func indentWidth(line string) int {
	w := 0
	for _, r := range line {
		switch r {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w
		}
	}
	return w
}

// fenceOf returns the fence that opens or closes a fenced code block at the start of a line, or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

func parseLine(line string) (Command, error) {
	rest := strings.TrimSpace(line[len("/bench"):])
	sub, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	if i := strings.IndexAny(sub, "\t"); i >= 0 {
		sub, args = sub[:i], strings.TrimSpace(sub[i+1:]+" "+args)
	}
	bad := func(format string, a ...any) (Command, error) {
		return Command{}, &CommandError{Problem: fmt.Sprintf(format, a...)}
	}
	if commandSHA(sub) {
		if args != "" {
			return bad("`/bench <commit>` takes nothing after the commit; post `/bench rerun`, `/bench paired` or `/bench accept` with their own arguments.")
		}
		return Command{Kind: CommandRun, SHA: strings.ToLower(sub)}, nil
	}
	switch strings.ToLower(sub) {
	case "":
		return Command{Kind: CommandRun}, nil
	case "help":
		if args != "" {
			return bad("`/bench help` takes no arguments.")
		}
		return Command{Kind: CommandHelp}, nil
	case "rerun":
		cells, err := parseCells(args)
		if err != nil {
			return bad("`/bench rerun`: %v.", err)
		}
		return Command{Kind: CommandRerun, Cells: cells}, nil
	case "bisect":
		if args == "" {
			return Command{Kind: CommandBisect}, nil
		}
		g, b, ok := strings.Cut(args, "..")
		if !ok || !commandSHA(g) || !commandSHA(b) || strings.ContainsAny(args, " \t") {
			return bad("`/bench bisect`: %q is not a range <good>..<bad> of two commits of at least %d hex digits, e.g. `/bench bisect 1a2b3c4..5d6e7f8`.", args, MinSHALen)
		}
		return Command{Kind: CommandBisect, Good: strings.ToLower(g), Bad: strings.ToLower(b)}, nil
	case "paired":
		cells, err := parseCells(args)
		if err != nil {
			return bad("`/bench paired`: %v.", err)
		}
		return Command{Kind: CommandPaired, Cells: cells}, nil
	case "accept":
		sha := ""
		if first, rest, _ := strings.Cut(args, " "); commandSHA(first) {
			sha, args = strings.ToLower(first), strings.TrimSpace(rest)
		}
		// Bidirectional controls reorder what a reader sees: dropped, in every copy of the reason.
		reason := strings.TrimSpace(strings.Map(func(r rune) rune {
			if bidiControl(r) {
				return -1
			}
			return r
		}, unquote(args)))
		switch {
		case reason == "":
			return bad("`/bench accept` needs a reason, e.g. `/bench accept \"the slowdown buys correctness, see #123\"`.")
		case utf8.RuneCountInString(reason) > MaxReasonLen:
			return bad("`/bench accept`: the reason has %d characters; keep it under %d.", utf8.RuneCountInString(reason), MaxReasonLen)
		case strings.ContainsFunc(reason, func(r rune) bool { return unicode.IsControl(r) }):
			return bad("`/bench accept`: the reason holds control characters.")
		}
		return Command{Kind: CommandAccept, Reason: reason, SHA: sha}, nil
	}
	return bad("Unknown command %s.", CodeSpan("/bench "+sub, maxQuote))
}

// parseCells reads cells separated by commas and/or blanks.
func parseCells(s string) ([]results.CellID, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	var cells []results.CellID
	seen := map[results.CellID]bool{}
	for _, f := range fields {
		id, err := results.ParseCellID(f)
		if err != nil {
			// ParseCellID's detail quotes the text outside a code span: not for a reply.
			return nil, fmt.Errorf("%s is not a cell (want prefill/CTX or decode/CTX/CONCURRENCY, e.g. prefill/8K or decode/8K/32)", CodeSpan(f, maxQuote))
		}
		if !seen[id] {
			seen[id] = true
			cells = append(cells, id)
		}
	}
	return cells, nil
}

// unquote trims s and removes one pair of matching quotes around it.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	for _, q := range [][2]string{{`"`, `"`}, {`'`, `'`}, {"“", "”"}, {"`", "`"}} {
		if len(s) >= len(q[0])+len(q[1]) && strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1]) {
			return strings.TrimSpace(s[len(q[0]) : len(s)-len(q[1])])
		}
	}
	return s
}

// CodeSpan quotes text that someone else wrote as a markdown code span: its backticks, control
// characters and bidirectional controls (which reorder what a reader sees) removed and at most max characters (an ellipsis marks a cut; 0 means no
// limit), so that no mention, link or HTML in it takes effect.
func CodeSpan(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r == '`' || unicode.IsControl(r) || bidiControl(r) {
			return -1
		}
		return r
	}, s)
	if max > 0 && utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return "`" + s + "`"
}

// bidiControl reports whether r is a bidirectional embedding, override, isolate or mark, which
// can make text display in another order than it reads (as report.EscapeText drops them).
func bidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f' || r == '\u061c'
}
