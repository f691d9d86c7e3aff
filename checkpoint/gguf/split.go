package gguf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

// The keys of a split model (llama.cpp's gguf-split): every split has
// them; only the first holds the model's other metadata.
const (
	KeySplitNo      = "split.no"            // uint16, 0-based
	KeySplitCount   = "split.count"         // uint16
	KeySplitTensors = "split.tensors.count" // int32, of all splits
)

// maxSplits is the most splits a model may have (split.count is a
// uint16).
const maxSplits = 1<<16 - 1

// SplitPath returns the name of split no (0-based) of count of the model
// prefix, as llama.cpp names them: "PREFIX-00001-of-00003.gguf".
func SplitPath(prefix string, no, count int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, no+1, count)
}

var splitName = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// SplitBySize assigns tensors of the given data sizes, in order, to
// splits of at most limit bytes of data, as gguf-split --split-max-size
// does: each size counts padded to the default alignment, a new split
// starts where the next tensor would pass limit, and a larger tensor gets a
// split of its own. It returns the split (0-based) of each tensor.
func SplitBySize(sizes []int64, limit int64) []int {
	out := make([]int, len(sizes))
	split, used := 0, int64(0)
	for i, n := range sizes {
		n = padded(n, DefaultAlignment)
		if used > 0 && used+n > limit {
			split, used = split+1, 0
		}
		out[i], used = split, used+n
	}
	return out
}

// SplitOf parses a split's name: "dir/m-00002-of-00004.gguf" gives
// "dir/m", 1 (0-based) and 4; false for a name not of that form.
func SplitOf(path string) (prefix string, no, count int, ok bool) {
	m := splitName.FindStringSubmatch(path)
	if m == nil {
		return "", 0, 0, false
	}
	n, _ := strconv.Atoi(m[2])
	c, _ := strconv.Atoi(m[3])
	if n < 1 || n > c {
		return "", 0, 0, false
	}
	return m[1], n - 1, c, true
}

// IsSplit reports whether the File is a split model opened with
// OpenModel, or one split of several (split.count above 1).
func (f *File) IsSplit() bool {
	if len(f.parts) > 0 {
		return true
	}
	n, ok := splitKey(f, KeySplitCount)
	return ok && n > 1
}

// Splits returns the files the File reads: its own name, or the names of
// every split of a model opened with OpenModel, in order.
func (f *File) Splits() []string {
	if len(f.parts) == 0 {
		return []string{f.Name}
	}
	out := make([]string, len(f.parts))
	for i, p := range f.parts {
		out[i] = p.Name
	}
	return out
}

// OpenModel opens a GGUF file as Open does; when it is one split of a
// model (split.count above 1, named as SplitPath names splits), it opens
// every split beside it and returns them as one File: the metadata of the
// first split without the split.* keys, the tensors of all splits in
// split order, each read from its own split (a tensor's Offset is then
// relative to its split's data section). Any missing or inconsistent split
// (its split.no and split.count, a tensor in two splits, a total other
// than split.tensors.count) is a *FormatError naming it.
func OpenModel(path string) (*File, error) {
	f, err := Open(path)
	if err != nil || !f.IsSplit() {
		return f, err
	}
	parts, err := openSplits(f, path)
	if err != nil {
		return nil, err
	}
	return join(parts)
}

// openSplits opens the other splits of the model whose split f (opened
// from path) is, and returns all of them in order.
func openSplits(f *File, path string) ([]*File, error) {
	count, _ := splitKey(f, KeySplitCount)
	no, ok := splitKey(f, KeySplitNo)
	bad := func(p, key, why string, err error) error {
		index := path
		if p == path {
			index = ""
		}
		return &FormatError{Format: format, Path: p, Index: index, Key: key, Offset: -1, Reason: why, Err: err,
			Kind: kindOf(err)}
	}
	prefix, nameNo, nameCount, named := SplitOf(path)
	switch {
	case !ok || no >= count:
		f.Close()
		return nil, bad(path, KeySplitNo, fmt.Sprintf("split.no of a model of %d splits missing or out of range", count), nil)
	case count > maxSplits:
		f.Close()
		return nil, bad(path, KeySplitCount, fmt.Sprintf("%d splits; a model has at most %d", count, maxSplits), nil)
	case !named || nameNo != no || nameCount != count:
		f.Close()
		return nil, bad(path, KeySplitNo, fmt.Sprintf("split %d of %d, but its name is not %s: the other "+
			"splits are found by llama.cpp's names (NAME-00001-of-%05d.gguf, ...)", no+1, count,
			SplitPath("NAME", no, count), count), nil)
	}
	parts := make([]*File, count)
	parts[no] = f
	closeAll := func() {
		for _, p := range parts {
			if p != nil {
				p.Close()
			}
		}
	}
	for i := range parts {
		if parts[i] != nil {
			continue
		}
		p := SplitPath(prefix, i, count)
		g, err := openSplit(p, path, i, count)
		if err != nil {
			closeAll()
			return nil, err
		}
		parts[i] = g
		gn, _ := splitKey(g, KeySplitNo)
		gc, _ := splitKey(g, KeySplitCount)
		if gn != i || gc != count {
			closeAll()
			return nil, bad(p, KeySplitNo, fmt.Sprintf("says it is split %d of %d, want %d of %d", gn+1, gc, i+1, count), nil)
		}
	}
	return parts, nil
}

// openSplit opens split p (no of count) of the model whose split given
// is path:
// its own *FormatError, with Index naming path, or one for a split that is
// not there.
func openSplit(p, path string, no, count int) (*File, error) {
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, &FormatError{Format: format, Path: p, Index: path, Offset: -1, Kind: fileerr.MissingFile,
			Reason: fmt.Sprintf("split %d of %d of the model is not there", no+1, count), Err: fs.ErrNotExist}
	}
	g, err := Open(p)
	var fe *FormatError
	switch {
	case errors.As(err, &fe):
		if fe.Index == "" {
			fe.Index = path
		}
		return nil, err
	case err != nil:
		return nil, &FormatError{Format: format, Path: p, Index: path, Offset: -1, Reason: "cannot open", Err: err,
			Kind: kindOf(err)}
	}
	return g, nil
}

// kindOf is the Kind of a split's error: MissingFile for a split that is
// not there, its own FormatError's, else Invalid.
func kindOf(err error) fileerr.Kind {
	var fe *FormatError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileerr.MissingFile
	case errors.As(err, &fe):
		return fe.Kind
	}
	return fileerr.Invalid
}

// join makes one File of a model's splits.
func join(parts []*File) (*File, error) {
	first := parts[0]
	f := &File{Name: first.Name, Version: first.Version, Alignment: first.Alignment, DataOffset: first.DataOffset,
		kvIdx: map[string]int{}, tIdx: map[string]int{}, parts: parts, partOf: map[string]int{}}
	for _, kv := range first.KV {
		if !strings.HasPrefix(kv.Key, "split.") {
			f.kvIdx[kv.Key] = len(f.KV)
			f.KV = append(f.KV, kv)
		}
	}
	for i, p := range parts {
		for _, t := range p.Tensors {
			if j, dup := f.partOf[t.Name]; dup {
				f.Close()
				return nil, &FormatError{Format: format, Path: p.Name, Index: first.Name, Tensor: t.Name, Offset: -1,
					Reason: fmt.Sprintf("tensor in splits %d and %d", j+1, i+1)}
			}
			f.partOf[t.Name] = i
			f.tIdx[t.Name] = len(f.Tensors)
			f.Tensors = append(f.Tensors, t)
		}
	}
	if n, ok := splitKey(first, KeySplitTensors); ok && n != len(f.Tensors) {
		f.Close()
		return nil, &FormatError{Format: format, Path: first.Name, Key: KeySplitTensors, Offset: -1,
			Reason: fmt.Sprintf("%d tensors, and the %d splits hold %d", n, len(parts), len(f.Tensors))}
	}
	return f, nil
}

// splitKey returns a split.* key's value as an int.
func splitKey(f *File, key string) (int, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	if n, ok := v.Uint(); ok && n <= 1<<31-1 {
		return int(n), true
	}
	if n, ok := v.Int(); ok && n >= 0 && n <= 1<<31-1 {
		return int(n), true
	}
	return 0, false
}

// TensorSplit returns the split (0-based) that holds the named tensor in
// a model opened with OpenModel; 0 for one file or an unknown name.
func (f *File) TensorSplit(name string) int { return f.partOf[name] }
