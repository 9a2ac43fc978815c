package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxFileSize bounds what Read accepts, so a wrong path cannot exhaust memory.
const maxFileSize = 1 << 30

// Decode reads one results document from data, strictly: unknown fields, trailing data and
// invalid values are errors that say where they are.
func Decode(data []byte) (*File, error) { return decodeDoc(data, "results", Validate) }

// Read reads and validates a results file from r.
func Read(r io.Reader) (*File, error) { return readDoc(r, "results", Decode) }

// ReadFile reads and validates the results file at path.
func ReadFile(path string) (*File, error) { return readDocFile(path, Read) }

// Encode validates f and returns its canonical JSON: two-space indented, fields in declaration
// order, ending in a newline. Encoding what Decode read gives the same bytes back.
func Encode(f *File) ([]byte, error) { return encodeDoc(f, Validate) }

// Write writes f's canonical JSON to w.
func Write(w io.Writer, f *File) error { return writeDoc(w, f, Encode) }

// WriteFile writes f to path in a folder speedmatrix keeps, as WriteFileAtomic writes: a
// temporary file in the same folder, synced, then renamed over path, so a reader never sees
// half a file and a failure leaves path as it was; a link or a non-regular file at path is
// refused. A path the user named goes through WriteOutputFile.
func WriteFile(path string, f *File) error { return writeDocFile(path, f, Encode, WriteFileAtomic) }

// WriteOutputFile writes f to path, a file the user named, as WriteOutput writes: /dev/null, a
// FIFO or /dev/stdout are written into, a link is followed, a regular file replaced atomically.
func WriteOutputFile(path string, f *File) error { return writeDocFile(path, f, Encode, WriteOutput) }

// EncodeUnchecked returns f's canonical JSON as Encode does, without the file's own check: for
// results that failed it, which a run keeps rather than lose what it measured.
func EncodeUnchecked(f *File) ([]byte, error) { return encodeDoc(f, func(*File) error { return nil }) }

// WriteFileUnchecked writes f to path as WriteOutputFile does, without the file's own check
// (EncodeUnchecked).
func WriteFileUnchecked(path string, f *File) error {
	return writeDocFile(path, f, EncodeUnchecked, WriteOutput)
}

// WrongFileError says that a document is one of this package's formats, but not the one asked
// for: a comparison file given where a results file belongs, or the reverse.
type WrongFileError struct {
	// Want and Got name the formats: "results" or "comparison".
	Want, Got string
	// Schema is the document's schema field.
	Schema string
}

func (e *WrongFileError) Error() string {
	return fmt.Sprintf("this is %s %s file (schema %s), not %s %s file", article(e.Got), e.Got, e.Schema, article(e.Want), e.Want)
}

// article returns "a" or "an" for a format name.
func article(what string) string {
	if what == "" {
		return "a"
	}
	switch what[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an"
	}
	return "a"
}

// decodeDoc reads one JSON document of this package's formats (what names it in errors)
// strictly and validates it.
func decodeDoc[T any](data []byte, what string, validate func(*T) error) (*T, error) {
	// A byte order mark (some Windows editors write one) is not part of the JSON.
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var v T
	if err := dec.Decode(&v); err != nil {
		if wf := otherFormat(data, what); wf != nil {
			return nil, wf
		}
		return nil, jsonError(data, err, what)
	}
	if dec.More() {
		return nil, fmt.Errorf("line %d: data after the %s document; a %s file holds one JSON object", lineOf(data, dec.InputOffset()), what, what)
	}
	if err := validate(&v); err != nil {
		return nil, err
	}
	return &v, nil
}

// utf8BOM is the UTF-8 byte order mark.
const utf8BOM = "\xef\xbb\xbf"

// formats maps each of this package's formats to its schema.
var formats = []struct{ what, schema string }{{"results", SchemaV1}, {"comparison", ComparisonSchemaV1}}

// schemaOf returns the schema of format what.
func schemaOf(what string) string {
	for _, f := range formats {
		if f.what == what {
			return f.schema
		}
	}
	return ""
}

// otherFormat returns a *WrongFileError when data, which did not decode as format what, is a
// JSON object whose schema names another of this package's formats; nil otherwise.
func otherFormat(data []byte, what string) error {
	var doc struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	for _, f := range formats {
		if f.what != what && strings.HasPrefix(doc.Schema, strings.TrimSuffix(f.schema, "v1")) {
			return &WrongFileError{Want: what, Got: f.what, Schema: doc.Schema}
		}
	}
	return nil
}

// readDoc reads all of r, bounded, and decodes it.
func readDoc[T any](r io.Reader, what string, decode func([]byte) (*T, error)) (*T, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("larger than %d bytes; is this a %s file?", maxFileSize, what)
	}
	return decode(data)
}

// readDocFile opens path and reads it, naming the path in errors.
func readDocFile[T any](path string, read func(io.Reader) (*T, error)) (*T, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	v, err := read(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// encodeDoc validates v and returns its canonical JSON.
func encodeDoc[T any](v *T, validate func(*T) error) ([]byte, error) {
	if err := validate(v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeDoc writes v's canonical JSON to w.
func writeDoc[T any](w io.Writer, v *T, encode func(*T) ([]byte, error)) error {
	data, err := encode(v)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// writeDocFile writes v's canonical JSON to path with write (WriteFileAtomic or WriteOutput).
func writeDocFile[T any](path string, v *T, encode func(*T) ([]byte, error), write func(string, []byte) error) error {
	data, err := encode(v)
	if err != nil {
		return err
	}
	return write(path, data)
}

// WriteFileAtomic writes data to path in a directory speedmatrix keeps (the store, the action's
// artifact, a site or demo folder): through a temporary file in the same folder, synced, then
// renamed over path, so that a reader never sees half a file and a failure leaves path as it
// was. Only a regular file is replaced: a symbolic link at path is refused (it is not followed,
// nor replaced), and so is anything else that is not a regular file (a device, a FIFO, a
// folder), with an error that names it. A path the user named goes through WriteOutput.
func WriteFileAtomic(path string, data []byte) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case st.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; speedmatrix does not write through links in its own folders (remove it)", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is %s, not a regular file; speedmatrix writes only regular files in its own folders (remove it)", path, modeWords(st.Mode()))
	}
	return renameInto(path, data)
}

// WriteOutput writes data to path, a file the user named (-o, --output and the like). A
// regular file, or none, is written as WriteFileAtomic writes it. Anything else is written
// into, never replaced: a character device (/dev/null), a FIFO or a socket, /dev/stdout and
// /dev/fd/N. A symbolic link is followed, as the user named it: to a regular file, that file
// is replaced atomically where it is (the link stays); to anything else, it is written into.
// A folder is an error.
func WriteOutput(path string, data []byte) error {
	st, err := os.Stat(path) // follows links: what the user's path names
	switch {
	case errors.Is(err, os.ErrNotExist):
		return renameInto(path, data) // a dangling link is replaced by the file, not followed
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a folder; give a file name", path)
	case !st.Mode().IsRegular():
		return writeInto(path, data)
	}
	lst, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if lst.Mode()&os.ModeSymlink == 0 {
		return renameInto(path, data)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil || strings.HasPrefix(target, "/proc/") || strings.HasPrefix(target, "/dev/") {
		// /dev/stdout → /proc/self/fd/1 and the like: a file another process opened; write
		// into it rather than replace it under that process.
		return writeInto(path, data)
	}
	return renameInto(target, data)
}

// OpenOutput opens path, a file the user named, for a writer that streams (a CPU profile):
// an existing file, device, FIFO or /dev/stdout is written into (a regular file truncated
// first), a link is followed, and a file is created when there is none; nothing is replaced.
// A folder is an error.
func OpenOutput(path string) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a folder; give a file name", path)
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
}

// writeInto writes data into the existing file at path, following links, without creating or
// replacing it (truncating a regular file first).
func writeInto(path string, data []byte) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// modeWords names a file's type in words for an error.
func modeWords(m os.FileMode) string {
	switch {
	case m&os.ModeDevice != 0 && m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// renameInto writes data to path through a temporary file beside it and a rename, the one
// atomic replacement of this package: the caller has checked that path is a regular file or
// absent.
func renameInto(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// jsonError turns a decoding error into one that names the line and, for a wrong type, the
// field.
func jsonError(data []byte, err error, what string) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		hint := ""
		if t := bytes.TrimSpace(data); what == "results" && len(t) > 0 && t[0] != '{' {
			hint = " (a results file is JSON; to read a speed-matrix report, convert it with speedmatrix import)"
		}
		return fmt.Errorf("line %d: not valid JSON: %v%s", lineOf(data, syn.Offset), syn, hint)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("the file holds a JSON %s; %s %s file is one JSON object, {\"schema\": %q, …}, as speedmatrix writes it", typ.Value, article(what), what, schemaOf(what))
	case errors.As(err, &typ):
		return fmt.Errorf("line %d: field %s: got a JSON %s, want %s", lineOf(data, typ.Offset), typ.Field, typ.Value, typ.Type)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("empty input; a %s file holds one JSON object", what)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends early; the file is truncated")
	}
	return fmt.Errorf("not a %s file: %w", what, err)
}

// lineOf returns the 1-based line number of byte offset off in data.
func lineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// ReadOrImport reads a results file (.json), or imports a report (Import) from any other file:
// the matrices `speedmatrix sim fit` fits.
func ReadOrImport(path string) (*File, error) {
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		return ReadFile(path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := Import(fh, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
