package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// Store keeps results files by engine commit and config id, with an index.
type Store interface {
	// Put stores f under e and returns the entry as indexed (config id, path, run id and time
	// filled in from f where e leaves them empty). A result of the same kind, commit and
	// config id (and PR, and run id for A/A) replaces the one stored before.
	Put(ctx context.Context, e Entry, f *results.File) (Entry, error)
	// Get returns the default-branch result of commit for configID; an error wrapping
	// ErrNotFound when there is none.
	Get(ctx context.Context, commit, configID string) (*results.File, Entry, error)
	// Open returns the results file of any indexed entry (a PR's, an A/A rerun's).
	Open(ctx context.Context, e Entry) (*results.File, error)
	// List returns the index entries f matches, newest first.
	List(ctx context.Context, f Filter) ([]Entry, error)
	// Prune removes what p does not keep (see Plan) and returns the entries removed.
	Prune(ctx context.Context, p Policy) ([]Entry, error)
}

// ErrNotFound is wrapped by Get and Open when the store holds no such result.
var ErrNotFound = errors.New("not in the store")

// Kind says where a result came from, and so what it may be used for.
type Kind string

// The kinds of stored results. Only KindDefault results are baselines and history; PR results
// are kept apart and never used as either.
const (
	KindDefault Kind = "default-branch" // a push to the default branch, or `speedmatrix baseline`
	KindPR      Kind = "pr"             // a pull request's head
	KindAA      Kind = "aa"             // an A/A rerun of a default-branch commit
	// KindBisect is one step of a bisection (speedmatrix bisect, the bot's): a real measurement
	// of a default-branch commit, kept apart from KindDefault so that change points, history
	// noise and baselines, which read KindDefault, do not count it a second time beside the
	// pushes' own results.
	KindBisect Kind = "bisect"
)

// Entry is one stored result as the index records it.
type Entry struct {
	Commit   string    `json:"commit"`
	ConfigID string    `json:"config_id"`
	Kind     Kind      `json:"kind"`
	PR       int       `json:"pr,omitempty"`
	Time     time.Time `json:"time"`
	Path     string    `json:"path"`
	RunID    string    `json:"run_id,omitempty"`
	// Base is, for a PR result, the default-branch commit whose result was its baseline: Plan
	// keeps that result as long as it keeps this one, so a pull request whose merge-base is older
	// than retention.keep pushes still finds its baseline.
	Base string `json:"base,omitempty"`
	// Blob is the git blob id of the file on a data branch (Branch), so that reading it needs
	// no tree walk; empty in a Dir.
	Blob string `json:"blob,omitempty"`
}

// Filter selects index entries; a zero field matches everything.
type Filter struct {
	ConfigID string
	Kind     Kind
	Commit   string
	PR       int
	// Limit, when positive, keeps only the newest Limit matches.
	Limit int
}

func (f Filter) match(e Entry) bool {
	return (f.ConfigID == "" || f.ConfigID == e.ConfigID) && (f.Kind == "" || f.Kind == e.Kind) &&
		(f.Commit == "" || f.Commit == e.Commit) && (f.PR == 0 || f.PR == e.PR)
}

// IndexSchema is the schema field of index.json.
const IndexSchema = "speedmatrix/store-index/v1"

// IndexFile is the name of the index at the root of a store.
const IndexFile = "index.json"

// Index is index.json: every stored result, oldest first.
type Index struct {
	Schema  string  `json:"schema"`
	Entries []Entry `json:"entries"`
}

// decodeIndex reads index.json; empty data is an empty index. fix says how to repair a damaged
// index where it is kept (a local folder and a data branch differ).
func decodeIndex(data []byte, fix string) (*Index, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Index{Schema: IndexSchema}, nil
	}
	var ix Index
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil {
		return nil, fmt.Errorf("store index: %w (index.json is damaged: %s)", err, fix)
	}
	if ix.Schema != IndexSchema {
		return nil, fmt.Errorf("store index: schema %q, want %q (written by another version of speedmatrix?)", ix.Schema, IndexSchema)
	}
	return &ix, nil
}

// encode writes the index sorted oldest first (then by path), indented, ending in a newline.
func (ix *Index) encode() []byte {
	ix.Schema = IndexSchema
	ix.sort()
	if ix.Entries == nil {
		ix.Entries = []Entry{}
	}
	data, _ := json.MarshalIndent(ix, "", "  ")
	return append(data, '\n')
}

func (ix *Index) sort() {
	slices.SortStableFunc(ix.Entries, func(a, b Entry) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
}

// put adds e, replacing an entry of the same path; it returns the entry replaced, if any.
func (ix *Index) put(e Entry) (old Entry, replaced bool) {
	for i, x := range ix.Entries {
		if x.Path == e.Path {
			ix.Entries[i] = e
			return x, true
		}
	}
	ix.Entries = append(ix.Entries, e)
	return Entry{}, false
}

// list returns the entries f matches, newest first.
func (ix *Index) list(f Filter) []Entry {
	var out []Entry
	for i := len(ix.Entries) - 1; i >= 0; i-- {
		if e := ix.Entries[i]; f.match(e) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return b.Time.Compare(a.Time) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out
}

// find returns the default-branch entry of commit and configID.
func (ix *Index) find(commit, configID string) (Entry, bool) {
	p := (Entry{Kind: KindDefault, Commit: commit, ConfigID: configID}).layoutPath()
	for _, e := range ix.Entries {
		if e.Path == p {
			return e, true
		}
	}
	return Entry{}, false
}

var (
	commitRE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	idRE     = regexp.MustCompile(`^[0-9a-f]{8,64}$`)
	runIDRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// runTime is the time an entry records of f: the run's end, else its start (zero when the file
// says neither).
func runTime(f *results.File) time.Time {
	if !f.Run.End.IsZero() {
		return f.Run.End
	}
	return f.Run.Start
}

// prepare checks e and fills what f says: the config id, the run id, the time (the run's end,
// else its start, else now) and the path.
func prepare(e Entry, f *results.File, now func() time.Time) (Entry, error) {
	if f == nil {
		return Entry{}, errors.New("store: no results file to put")
	}
	e.Commit = strings.ToLower(strings.TrimSpace(e.Commit))
	if !commitRE.MatchString(e.Commit) {
		return Entry{}, fmt.Errorf("store: engine commit %q is not a full commit id (give the 40-digit SHA the engine was built from: git rev-parse HEAD)", e.Commit)
	}
	if e.Kind == "" {
		e.Kind = KindDefault
	}
	id := ConfigID(f)
	switch {
	case e.ConfigID == "":
		e.ConfigID = id
	case e.ConfigID != id:
		return Entry{}, fmt.Errorf("store: entry config id %s does not match the file's %s", e.ConfigID, id)
	}
	if e.RunID == "" {
		e.RunID = f.Run.ID
	}
	if e.Time.IsZero() {
		e.Time = runTime(f)
	}
	if e.Time.IsZero() {
		e.Time = now()
	}
	e.Time = e.Time.UTC()
	switch e.Kind {
	case KindDefault:
		e.PR, e.Base = 0, ""
	case KindPR:
		if e.PR <= 0 {
			return Entry{}, fmt.Errorf("store: a PR result needs the pull request's number (got %d)", e.PR)
		}
		e.Base = strings.ToLower(strings.TrimSpace(e.Base))
		if e.Base != "" && !commitRE.MatchString(e.Base) {
			return Entry{}, fmt.Errorf("store: baseline commit %q of a PR result is not a full commit id", e.Base)
		}
	case KindAA, KindBisect:
		e.PR, e.Base = 0, ""
		if e.RunID == "" {
			e.RunID = strconv.FormatInt(e.Time.UnixNano(), 10)
		}
		if !runIDRE.MatchString(e.RunID) || e.RunID == "." || e.RunID == ".." {
			return Entry{}, fmt.Errorf("store: run id %q cannot name a file (letters, digits, '.', '_' and '-' only)", e.RunID)
		}
	default:
		return Entry{}, fmt.Errorf("store: kind %q: want %s, %s, %s or %s", e.Kind, KindDefault, KindPR, KindAA, KindBisect)
	}
	e.Path = e.layoutPath()
	e.Blob = ""
	return e, nil
}

// layoutPath returns where an entry's file lives in the store:
//
//	results/<engine-commit>/<config-id>.json           default-branch results (baselines, history)
//	pr/<number>/<engine-commit>/<config-id>.json       a pull request's results
//	aa/<engine-commit>/<config-id>/<run-id>.json       A/A reruns of a default-branch commit
//	bisect/<engine-commit>/<config-id>/<run-id>.json   a bisection's steps
func (e Entry) layoutPath() string {
	switch e.Kind {
	case KindBisect:
		return path.Join("bisect", e.Commit, e.ConfigID, e.RunID+".json")
	case KindPR:
		return path.Join("pr", strconv.Itoa(e.PR), e.Commit, e.ConfigID+".json")
	case KindAA:
		return path.Join("aa", e.Commit, e.ConfigID, e.RunID+".json")
	}
	return path.Join("results", e.Commit, e.ConfigID+".json")
}

// checkLookup validates the arguments of Get.
func checkLookup(commit, configID string) error {
	if !commitRE.MatchString(commit) {
		return fmt.Errorf("store: engine commit %q is not a commit id", commit)
	}
	if !idRE.MatchString(configID) {
		return fmt.Errorf("store: config id %q is not one (see `speedmatrix store list`)", configID)
	}
	return nil
}

// checkEntryPath refuses an index entry whose path is not where the layout puts it (a damaged
// or hand-edited index must not make Open read outside the store).
func checkEntryPath(e Entry) error {
	if !commitRE.MatchString(e.Commit) || !idRE.MatchString(e.ConfigID) || ((e.Kind == KindAA || e.Kind == KindBisect) && !runIDRE.MatchString(e.RunID)) ||
		e.RunID == "." || e.RunID == ".." {
		return fmt.Errorf("store: index entry %q names no valid commit, config id or run id (the index is damaged)", e.Path)
	}
	if e.Path == "" || e.Path != e.layoutPath() {
		return fmt.Errorf("store: index entry path %q is not where the layout puts %s results of %s (the index is damaged)", e.Path, e.Kind, e.Commit)
	}
	return nil
}

// encodeFile returns the canonical JSON of f, validated.
func encodeFile(f *results.File) ([]byte, error) {
	data, err := results.Encode(f)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return data, nil
}

// DamagedError is returned by Open and Get when the index names a stored file that cannot be
// read as a results file (truncated, overwritten, not JSON): the file, why, and how to repair
// it where the store is kept.
type DamagedError struct {
	// Where names the store ("store DIR", "data branch … of o/r").
	Where string
	// Path is the file's path in the store.
	Path string
	// Fix says how to remove or restore it.
	Fix string
	Err error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("%s: %s is damaged: %v (%s)", e.Where, e.Path, e.Err, e.Fix)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// Unreadable reports whether err says that a stored file the index names is missing or damaged
// (ErrNotFound, *DamagedError), rather than that the store could not be read at all: a reader
// of optional evidence (history, A/A reruns) skips such a file and goes on.
func Unreadable(err error) bool {
	var d *DamagedError
	return errors.Is(err, ErrNotFound) || errors.As(err, &d)
}

// decodeStored decodes a stored results file. A file that is not JSON at all is said to be so
// (results.Decode's hint to convert a report with speedmatrix import is for files a user gives,
// not for files the store wrote).
func decodeStored(data []byte) (*results.File, error) {
	t := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(t) > 0 && t[0] != '{' {
		return nil, errors.New("not JSON: a stored result is one JSON object, as speedmatrix writes it")
	}
	return results.Read(bytes.NewReader(data))
}

// MinCommitPrefix is the fewest hex digits ExpandCommit takes as an abbreviated commit (git's
// default abbreviation).
const MinCommitPrefix = 7

var hexRE = regexp.MustCompile(`^[0-9a-f]+$`)

// IsCommit reports whether s is a full commit id (40 or 64 lower-case hex digits).
func IsCommit(s string) bool { return commitRE.MatchString(s) }

// IsCommitPrefix reports whether s abbreviates a commit id: MinCommitPrefix or more lower-case
// hex digits, fewer than a full id.
func IsCommitPrefix(s string) bool {
	return len(s) >= MinCommitPrefix && hexRE.MatchString(s) && !commitRE.MatchString(s)
}

// ExpandCommit returns the full engine commit that prefix names among the commits s holds
// results of: prefix itself when it is a full id, else the one stored commit it abbreviates
// (MinCommitPrefix hex digits or more, as `store list` prints 12). It returns an error wrapping
// ErrNotFound when no stored commit starts with prefix, and an *AmbiguousCommitError when
// several do.
func ExpandCommit(ctx context.Context, s Store, prefix string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(prefix))
	if IsCommit(p) {
		return p, nil
	}
	if !IsCommitPrefix(p) {
		return "", fmt.Errorf("store: %q is not a commit id nor an abbreviation of one (%d or more hex digits)", prefix, MinCommitPrefix)
	}
	es, err := s.List(ctx, Filter{})
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range es {
		if strings.HasPrefix(e.Commit, p) && !slices.Contains(found, e.Commit) {
			found = append(found, e.Commit)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("store: no stored result of a commit starting with %s: %w", p, ErrNotFound)
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", &AmbiguousCommitError{Prefix: p, Commits: found}
}

// AmbiguousCommitError says that an abbreviated commit names several stored commits.
type AmbiguousCommitError struct {
	Prefix  string
	Commits []string
}

func (e *AmbiguousCommitError) Error() string {
	return fmt.Sprintf("store: %s abbreviates %d stored commits (%s); give more digits", e.Prefix, len(e.Commits), strings.Join(e.Commits, ", "))
}
