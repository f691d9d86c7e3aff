// Package filetype tells what kind of file a path is from its first bytes
// (or what a directory holds), for the messages that say what a file of
// the wrong kind is: a .npy array given where a checkpoint is read, a
// config.json given where an index is. checkpoint/load detects the
// checkpoint formats with Head.
package filetype

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// Type is a kind of file.
type Type uint8

// The kinds of file Detect tells apart.
const (
	Unknown     Type = iota
	Safetensors      // a safetensors file: a header length, then '{'
	GGUF             // a GGUF file (a model, an importance matrix, ...)
	Index            // a sharded checkpoint's index: JSON with a weight_map
	Config           // a model's config.json: JSON with model_type or architectures
	JSON             // another JSON document
	NPY              // a NumPy .npy array
	Zip              // a zip archive: a NumPy .npz, a PyTorch .pt or .bin
	Pickle           // a Python pickle: an old PyTorch .bin or .pt
	Checkpoint       // a directory holding a checkpoint
	CastDir          // a directory written by tcast cast (it holds info.json)
	Dir              // another directory
)

var names = [...]string{
	Unknown: "unknown", Safetensors: "safetensors", GGUF: "gguf", Index: "index",
	Config: "config", JSON: "json", NPY: "npy", Zip: "zip", Pickle: "pickle",
	Checkpoint: "checkpoint directory", CastDir: "cast directory", Dir: "directory",
}

// String returns a short name of t.
func (t Type) String() string {
	if int(t) < len(names) {
		return names[t]
	}
	return "unknown"
}

// headLen is how many first bytes Head looks at.
const headLen = 9

// maxHeader is the largest safetensors header length (the reference
// reader's limit, safetensors.MaxHeaderSize).
const maxHeader = 100_000_000

// maxJSONScan bounds the bytes of a JSON document read for its top-level
// keys.
const maxJSONScan = 1 << 20

// Head returns the kind of a file of size bytes whose first bytes are b
// (up to 9 are used): Safetensors (a header length a safetensors file can
// have, then '{', whether or not the file is as long as the length says:
// a file cut short is one too), GGUF, NPY, Zip, Pickle, or JSON for a
// document that starts with '{' or '['; Unknown otherwise. Head reads no
// JSON, so it never returns Index or Config.
func Head(b []byte, size int64) Type {
	switch {
	case bytes.HasPrefix(b, []byte("GGUF")):
		return GGUF
	case bytes.HasPrefix(b, []byte("\x93NUMPY")):
		return NPY
	case bytes.HasPrefix(b, []byte("PK\x03\x04")), bytes.HasPrefix(b, []byte("PK\x05\x06")):
		return Zip
	case len(b) >= headLen && binary.LittleEndian.Uint64(b) <= maxHeader && b[8] == '{':
		return Safetensors
	case len(b) >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5 && !HeaderFits(b, size):
		return Pickle
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return JSON
	}
	return Unknown
}

// HeaderFits reports whether b's first 8 bytes, read as a safetensors
// header length, fit in a file of size bytes.
func HeaderFits(b []byte, size int64) bool {
	if len(b) < 8 || size < 8 {
		return false
	}
	return binary.LittleEndian.Uint64(b) <= uint64(size)-8
}

// Detect returns the kind of the file or directory at path; Unknown when
// it cannot be read or tells nothing. A JSON document is read (at most its
// first MiB) for its top-level keys: Index or Config, else JSON.
func Detect(path string) Type {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return Unknown
	case st.IsDir():
		return detectDir(path)
	}
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return Unknown
	}
	defer f.Close()
	var head [headLen]byte
	n, _ := io.ReadFull(f, head[:])
	t := Head(head[:n], fi.Size())
	if t != JSON {
		return t
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return t
	}
	return jsonKind(io.LimitReader(f, maxJSONScan))
}

// jsonKind reads the top-level keys of the JSON object r holds.
func jsonKind(r io.Reader) Type {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return JSON
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return JSON
		}
		switch tok {
		case "weight_map":
			return Index
		case "model_type", "architectures":
			return Config
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return JSON
		}
	}
	return JSON
}

// detectDir tells a cast directory and a checkpoint's directory from
// other directories.
func detectDir(dir string) Type {
	if _, err := os.Stat(filepath.Join(dir, "info.json")); err == nil {
		return CastDir
	}
	for _, pattern := range []string{"*.safetensors", "*.gguf", "model.safetensors.index.json"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
			return Checkpoint
		}
	}
	return Dir
}
