package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
)

// dirStore is the local baseline directory: results files named <sha>.json on the (self-hosted)
// runner's disk. It is the fallback where the store (resultStore) cannot be written or read:
// the measure mode, which holds no token.
type dirStore struct{ dir string }

// path returns the file of sha.
func (s dirStore) path(sha string) string { return filepath.Join(s.dir, sha+".json") }

// Get returns the path of sha's results, or "" when the store has none.
func (s dirStore) Get(sha string) string {
	if !ghbot.ValidSHA(sha) {
		return ""
	}
	if st, err := os.Stat(s.path(sha)); err == nil && st.Mode().IsRegular() {
		return s.path(sha)
	}
	return ""
}

// Put copies the results file at src as sha's.
func (s dirStore) Put(sha, src string) error {
	if !ghbot.ValidSHA(sha) {
		return fmt.Errorf("baseline store: %q is not a commit id", sha)
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("baseline store: %w", err)
	}
	return copyFile(src, s.path(sha))
}

func copyFile(src, dst string) error {
	if filepath.Clean(src) == filepath.Clean(dst) {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return results.WriteFileAtomic(dst, b)
}

// Files of the artifact directory.
const (
	artifactMeta       = "meta.json"
	artifactResults    = "results.json"
	artifactBase       = "base.json"
	artifactComparison = "comparison.json"
	artifactComment    = "comment.md"
	artifactAA         = "aa.json" // a push's A/A rerun (input aa)
	metaSchema         = "speedmatrix/action-artifact/v1"
	maxMetaBytes       = 64 << 10
)

// meta is what the measure mode tells the report mode besides the results files.
type meta struct {
	Schema  string   `json:"schema"`
	HeadSHA string   `json:"head_sha"`
	BaseSHA string   `json:"base_sha,omitempty"`
	PR      int      `json:"pr,omitempty"`
	Kind    string   `json:"kind"`
	Cells   []string `json:"cells,omitempty"`
	// NoBaseline says why base.json is absent.
	NoBaseline string `json:"no_baseline,omitempty"`
	// Error says why results.json is absent or partial.
	Error string `json:"error,omitempty"`
}

func writeMeta(dir string, m meta) error {
	m.Schema = metaSchema
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(dir, artifactMeta), append(b, '\n'))
}

// errNoArtifact is returned by readMeta when the artifact has no meta.json.
var errNoArtifact = errors.New("the artifact holds no meta.json")

// readMeta reads and checks the artifact's meta.json, which is untrusted: its commit ids must be
// commit ids, its kind one of ours, its cells cells; its texts are not kept.
func readMeta(dir string) (meta, error) {
	f, err := os.Open(filepath.Join(dir, artifactMeta))
	if errors.Is(err, fs.ErrNotExist) {
		return meta{}, errNoArtifact
	}
	if err != nil {
		return meta{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMetaBytes+1))
	if err != nil {
		return meta{}, err
	}
	if len(b) > maxMetaBytes {
		return meta{}, fmt.Errorf("artifact meta.json is over %d bytes", maxMetaBytes)
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return meta{}, fmt.Errorf("artifact meta.json: %w", err)
	}
	switch {
	case m.Schema != metaSchema:
		return meta{}, fmt.Errorf("artifact meta.json: schema %q, want %s", m.Schema, metaSchema)
	case !ghbot.ValidSHA(m.HeadSHA):
		return meta{}, fmt.Errorf("artifact meta.json: head_sha is not a commit id")
	case m.BaseSHA != "" && !ghbot.ValidSHA(m.BaseSHA):
		return meta{}, fmt.Errorf("artifact meta.json: base_sha is not a commit id")
	case m.PR < 0:
		return meta{}, fmt.Errorf("artifact meta.json: pr is negative")
	}
	switch ghbot.RunKind(m.Kind) {
	case ghbot.RunPullRequest, ghbot.RunCommand, ghbot.RunCheckRun, ghbot.RunBaseline, ghbot.RunMergeGroup, ghbot.RunDispatch:
	default:
		return meta{}, fmt.Errorf("artifact meta.json: kind is not one of ours")
	}
	if m.Cells, err = canonicalCells(m.Cells); err != nil {
		return meta{}, fmt.Errorf("artifact meta.json: cells: %w", err)
	}
	// Free texts from the artifact are not shown: the report says what it found itself.
	m.NoBaseline, m.Error = "", ""
	return m, nil
}

// maxArtifactBytes is the largest results file the report mode parses from an artifact: a full
// matrix with every trial is a few MiB; the measuring job ran pull-request code and could leave
// a file of any size, which would be parsed and committed to the data branch.
const maxArtifactBytes = 16 << 20

// tooLargeError is an artifact file over maxArtifactBytes.
type tooLargeError struct {
	name string
	size int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the artifact's %s is %d bytes, over the %d MiB a results file may have; nothing stored or posted (measure fewer cells, or drop the notes that fill it)", e.name, e.size, maxArtifactBytes>>20)
}

// readArtifactResults reads a results file of an artifact, refusing one over maxArtifactBytes
// (a *tooLargeError) before parsing it.
func readArtifactResults(path string) (*results.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the artifact's %s is not a regular file", filepath.Base(path))
	}
	if st.Size() > maxArtifactBytes {
		return nil, &tooLargeError{name: filepath.Base(path), size: st.Size()}
	}
	return results.ReadFile(path)
}
