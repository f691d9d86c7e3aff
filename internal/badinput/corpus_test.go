package badinput

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

var update = flag.Bool("update", false, "rewrite testdata/bad from the cases in cases_test.go")

// root is the corpus, at the repository root.
var root = filepath.Join("..", "..", "testdata", "bad")

// Bounds every case must keep. The deadline guards against a reader that
// blocks or loops; it is no speed assertion (a case takes milliseconds).
// The memory bound is on the bytes the Go heap allocates while a case runs
// (runtime.MemStats.TotalAlloc): every file of the corpus is at most 64 KiB,
// and a reader that trusts a claimed size (2^63 bytes, 16 GiB) would
// allocate far more, so 64 MiB separates the two by three orders of
// magnitude on either side. Memory-mapped input is not heap and not counted.
const (
	caseDeadline = 10 * time.Second
	caseAlloc    = 64 << 20
	maxCaseFile  = 64 << 10
)

// checks are the typed errors a case's error must match, by name.
var checks = map[string]func(error) bool{
	"safetensors.FormatError":    asType[*safetensors.FormatError],
	"gguf.FormatError":           asType[*gguf.FormatError],
	"npy.FormatError":            asType[*npy.FormatError],
	"imatrix.FormatError":        asType[*imatrix.FormatError],
	"castdir.FormatError":        asType[*castdir.FormatError],
	"ggufmodel.UnsupportedError": asType[*ggufmodel.UnsupportedError],
	"ggufmodel.MissingKeyError":  asType[*ggufmodel.MissingKeyError],
	"dtype.ParseError":           asType[*dtype.ParseError],
	// A file named by another that cannot be opened is the operating
	// system's error, as the readers document.
	"fs.PathError":        asType[*fs.PathError],
	"tcast.LookupError":   asType[*tcast.LookupError],
	"scale.ParseError":    asType[*scale.ParseError],
	"scale.ErrMode":       func(err error) bool { return errors.Is(err, scale.ErrMode) },
	"sparsity.ErrPattern": func(err error) bool { return errors.Is(err, sparsity.ErrPattern) },
	"layout.UnknownError": asType[*layout.UnknownError],
	"rotate.ErrSyntax":    func(err error) bool { return errors.Is(err, rotate.ErrSyntax) },
	// load.Open reports our __metadata__ with the error of the layer that
	// found the problem.
	"load": func(err error) bool {
		return errors.Is(err, layout.ErrFormatVersion) || asType[*layout.UnknownError](err) ||
			asType[*json.SyntaxError](err) || asType[*json.UnmarshalTypeError](err) ||
			asType[*safetensors.FormatError](err) || asType[*layout.FormatError](err)
	},
}

func asType[T error](err error) bool {
	var t T
	return errors.As(err, &t)
}

// readerCheck is the typed error of each reader, unless a case names another.
var readerCheck = map[string]string{
	"safetensors": "safetensors.FormatError",
	"index":       "safetensors.FormatError",
	"gguf":        "gguf.FormatError",
	"gguf-split":  "gguf.FormatError",
	"npy":         "npy.FormatError",
	"npz":         "npy.FormatError",
	"imatrix":     "imatrix.FormatError",
}

// grammarCheck is the entry point and typed error of each grammar file.
var grammarCheck = map[string]struct {
	parse func(string) error
	check string
}{
	"dtype":      {func(s string) error { _, err := dtype.Parse(s); return err }, "dtype.ParseError"},
	"datatype":   {func(s string) error { _, err := tcast.Lookup(s); return err }, "tcast.LookupError"},
	"scale":      {func(s string) error { _, err := scale.Parse(s); return err }, "scale.ParseError"},
	"sparsity":   {func(s string) error { _, err := sparsity.ParsePattern(s); return err }, "sparsity.ErrPattern"},
	"format":     {func(s string) error { _, err := layout.Get(s); return err }, "layout.UnknownError"},
	"rotate":     {func(s string) error { _, err := rotate.Parse(s); return err }, "rotate.ErrSyntax"},
	"scale-mode": {func(s string) error { _, err := scale.ParseMode(s); return err }, "scale.ErrMode"},
}

// kinds are the problem kinds (FormatError.Kind, matched by errors.Is)
// of the cases whose kind is not Invalid, by path: the tcast command gives
// its next step by it (a file of another format is not called damaged).
// Every case under a truncated/ directory (a valid file cut short) is
// ErrTruncated; the others are ErrInvalid, or ErrTruncated when a length
// or offset in the file points past its end (the hostile and the cut
// file cannot be told apart).
var kinds = map[string]error{
	"safetensors/hdrlen-2p63.safetensors":       fileerr.ErrNotFormat,
	"safetensors/hdrlen-max-int64.safetensors":  fileerr.ErrNotFormat,
	"safetensors/hdrlen-max-uint64.safetensors": fileerr.ErrNotFormat,
	"safetensors/hdrlen-over-limit.safetensors": fileerr.ErrNotFormat,
	"safetensors/hdrlen-zero.safetensors":       fileerr.ErrNotFormat,
	"safetensors/hdr-array.safetensors":         fileerr.ErrNotFormat,
	"safetensors/hdr-not-json.safetensors":      fileerr.ErrNotFormat,
	"safetensors/hdrlen-past-eof.safetensors":   fileerr.ErrTruncated,
	"safetensors/offsets-past-eof.safetensors":  fileerr.ErrTruncated,
	"index/not-json":                            fileerr.ErrNotFormat,
	"index/array":                               fileerr.ErrNotFormat,
	"index/weight-map-missing":                  fileerr.ErrNotFormat,
	"index/is-config":                           fileerr.ErrNotFormat,
	"gguf/is-safetensors.gguf":                  fileerr.ErrNotFormat,
	"npy/is-npz.npy":                            fileerr.ErrNotFormat,
	"npy/is-safetensors.npy":                    fileerr.ErrNotFormat,
	"index/shard-missing":                       fileerr.ErrMissingFile,
	"gguf-split/split-missing":                  fileerr.ErrMissingFile,
	"gguf-split/split-truncated":                fileerr.ErrTruncated,
	"gguf/magic-bad.gguf":                       fileerr.ErrNotFormat,
	"gguf/magic-lowercase.gguf":                 fileerr.ErrNotFormat,
	"gguf/version-1.gguf":                       fileerr.ErrUnsupported,
	"gguf/version-2.gguf":                       fileerr.ErrUnsupported,
	"gguf/version-4.gguf":                       fileerr.ErrUnsupported,
	"gguf/version-big-endian.gguf":              fileerr.ErrUnsupported,
	"gguf/version-max.gguf":                     fileerr.ErrUnsupported,
	"gguf/tensor-type-4-removed.gguf":           fileerr.ErrUnsupported,
	"gguf/tensor-type-99.gguf":                  fileerr.ErrUnsupported,
	"gguf/tensor-type-max.gguf":                 fileerr.ErrUnsupported,
	"npy/magic-bad.npy":                         fileerr.ErrNotFormat,
	"npy/version-0-0.npy":                       fileerr.ErrUnsupported,
	"npy/version-1-1.npy":                       fileerr.ErrUnsupported,
	"npy/version-4-0.npy":                       fileerr.ErrUnsupported,
	"npy/descr-object.npy":                      fileerr.ErrUnsupported,
	"npy/descr-structured.npy":                  fileerr.ErrUnsupported,
	"npy/descr-string-size-2p62.npy":            fileerr.ErrUnsupported,
	"npy/hdrlen-v2-max.npy":                     fileerr.ErrTooLarge,
	"npy/hdrlen-v3-2p31.npy":                    fileerr.ErrTooLarge,
	"npz/not-zip.npz":                           fileerr.ErrNotFormat,
	"npz/npy-not-npz.npz":                       fileerr.ErrNotFormat,
	"npz/member-claims-4g-deflate.npz":          fileerr.ErrTooLarge,
	"npz/member-claims-4g-stored.npz":           fileerr.ErrTooLarge,
	"npz/member-csize-past-eof.npz":             fileerr.ErrTooLarge,
	"npz/member-zip64-claims-2p63.npz":          fileerr.ErrTooLarge,
	"npz/member-zip64-claims-max-uint64.npz":    fileerr.ErrTooLarge,
	"npz/member-zip64-compressed-2p63.npz":      fileerr.ErrTooLarge,
}

// requireKind checks the kind of a file case's error: the one kinds
// names, ErrTruncated under a truncated directory, or else ErrInvalid;
// none for the cases of a reader of no FormatError kind (config files)
// and the importance matrices that are none at all.
func requireKind(t *testing.T, c badCase, err error) {
	t.Helper()
	var fe *fileerr.FormatError
	if !errors.As(err, &fe) || c.reader() == "config" || errors.Is(err, imatrix.ErrNotFormat) {
		return
	}
	want, ok := kinds[c.path]
	switch {
	case ok:
	case strings.Contains(c.path, "/truncated/"):
		want = fileerr.ErrTruncated
	case fe.Kind == fileerr.Truncated:
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s: truncated: the cause says so", c.path)
		return
	default:
		want = fileerr.ErrInvalid
	}
	require.ErrorIs(t, err, want, "%s: kind %v", c.path, fe.Kind)
}

// entry feeds a file case to its reader's entry point, as tcast inspect,
// convert and verify use them, and reads every tensor it holds.
func entry(c badCase, p string) error {
	switch c.reader() {
	case "safetensors":
		f, err := safetensors.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		for _, t := range f.Tensors() {
			if _, err := f.Bytes(t.Name); err != nil {
				return err
			}
		}
		return nil
	case "index":
		s, err := safetensors.OpenIndex(filepath.Join(p, safetensors.IndexFileName))
		if err != nil {
			return err
		}
		defer s.Close()
		for _, t := range s.Tensors() {
			if _, err := s.Bytes(t.Name); err != nil {
				return err
			}
		}
		return nil
	case "gguf":
		return readGGUF(gguf.Open(p))
	case "gguf-split":
		given, _ := filepath.Glob(filepath.Join(p, "*-00001-of-*.gguf"))
		if len(given) == 0 {
			given = []string{filepath.Join(p, "model.gguf")}
		}
		return readGGUF(gguf.OpenModel(given[0]))
	case "npy":
		_, err := npy.ReadFile(p)
		return err
	case "npz":
		_, err := npy.ReadNPZ(p)
		return err
	case "imatrix":
		_, err := imatrix.Read(p)
		return err
	}
	// config/<kind>/...
	switch strings.Split(c.path, "/")[1] {
	case "config-json":
		b, err := os.ReadFile(filepath.Join(p, ggufmodel.ConfigFile))
		if err != nil {
			return err
		}
		_, err = ggufmodel.Detect(b)
		return ggufmodel.InDir(err, p, ggufmodel.ConfigFile)
	case "tokenizer-json", "tokenizer-config-json":
		_, err := ggufmodel.ReadTokenizer(p, ggufmodel.TokenizerOptions{})
		return err
	case "info-json":
		d, err := castdir.Open(p)
		if err != nil {
			return err
		}
		_, _, err = d.Float32()
		return err
	case "tcast-metadata", "tcast-weight", "layout-tensors":
		return loadOpen(filepath.Join(p, "model.safetensors"))
	}
	return fmt.Errorf("no reader for %s", c.path)
}

// loadOpen opens a checkpoint with checkpoint/load, as tcast inspect,
// convert and verify do, and reads every logical tensor.
// readGGUF reads every tensor of an opened GGUF file, then closes it.
func readGGUF(f *gguf.File, err error) error {
	if err != nil {
		return err
	}
	defer f.Close()
	for _, t := range f.Tensors {
		if _, err := f.TensorBytes(t.Name); err != nil {
			return err
		}
	}
	return nil
}

func loadOpen(p string) error {
	c, err := load.Open(p)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, t := range c.Tensors() {
		if t.Float {
			if _, _, err := c.Float32(t.Name); err != nil {
				return err
			}
		} else if _, err := c.Bytes(t.Name); err != nil {
			return err
		}
	}
	return nil
}

// outcome is what running one input gave.
type outcome struct {
	err      error
	panicked any
	alloc    uint64
	elapsed  time.Duration
}

// guarded runs fn in a goroutine, recovering a panic and measuring the heap
// bytes allocated; it gives up after caseDeadline.
func guarded(fn func() error) (outcome, bool) {
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		defer func() {
			o.elapsed = time.Since(start)
			runtime.ReadMemStats(&after)
			o.alloc = after.TotalAlloc - before.TotalAlloc
			o.panicked = recover()
			done <- o
		}()
		o.err = fn()
	}()
	select {
	case o := <-done:
		return o, true
	case <-time.After(caseDeadline):
		return outcome{}, false
	}
}

// requireRefused checks one outcome: an error (no panic, within the bounds)
// matching check, whose message holds every string of want.
func requireRefused(t *testing.T, o outcome, ok bool, check string, want []string) {
	t.Helper()
	require.True(t, ok, "no answer within %v", caseDeadline)
	require.Nil(t, o.panicked, "panic")
	require.Error(t, o.err, "accepted")
	msg := o.err.Error()
	require.LessOrEqual(t, o.alloc, uint64(caseAlloc), "allocated %d bytes: %s", o.alloc, msg)
	require.Contains(t, checks, check)
	require.True(t, checks[check](o.err), "error %T does not match %s: %s", o.err, check, msg)
	for _, w := range want {
		require.Contains(t, msg, w)
	}
	require.LessOrEqual(t, len(msg), 4096, "message of %d bytes", len(msg))
}

// TestBadCorpus runs every input of testdata/bad through its reader or
// grammar. With -update it first rewrites the corpus from cases_test.go;
// without, it checks the corpus is what cases_test.go describes.
func TestBadCorpus(t *testing.T) {
	cases := corpus()
	if *update {
		writeCorpus(t, cases)
	}
	checkCorpus(t, cases)
	paths := map[string]bool{}
	for _, c := range cases {
		paths[c.path] = true
	}
	for p := range kinds {
		require.True(t, paths[p], "kinds names no case %s", p)
	}

	counts := map[string]int{}
	worst := outcome{}
	for _, c := range cases {
		if c.reader() == "grammar" {
			n := runGrammar(t, c)
			counts[strings.TrimSuffix(c.path, ".txt")] += n
			continue
		}
		key := c.reader()
		if key == "config" {
			key = "config/" + strings.Split(c.path, "/")[1]
		}
		counts[key]++
		t.Run(c.path, func(t *testing.T) {
			p := filepath.Join(root, filepath.FromSlash(c.path))
			name := c.names
			if name == "" {
				name = filepath.Base(c.path)
			}
			check := c.check
			if check == "" {
				check = readerCheck[c.reader()]
			}
			o, ok := guarded(func() error { return entry(c, p) })
			requireRefused(t, o, ok, check, append([]string{name}, c.want...))
			requireKind(t, c, o.err)
			worst = heavier(worst, o)
			// The checkpoint loader behind tcast inspect, convert and verify
			// refuses the checkpoint files too, naming the file.
			switch c.reader() {
			case "safetensors", "gguf", "index", "gguf-split":
				o, ok := guarded(func() error { return loadOpen(p) })
				require.True(t, ok)
				require.Nil(t, o.panicked)
				require.Error(t, o.err)
				require.True(t, checks[check](o.err) || errors.Is(o.err, load.ErrNotCheckpoint),
					"load.Open: %T: %v", o.err, o.err)
				require.LessOrEqual(t, o.alloc, uint64(caseAlloc))
				if c.reader() != "index" && c.reader() != "gguf-split" {
					require.Contains(t, o.err.Error(), filepath.Base(c.path))
				}
				counts["load.Open"]++
			}
		})
	}
	keys := make([]string, 0, len(counts))
	total := 0
	for k, n := range counts {
		keys = append(keys, k)
		if k != "load.Open" {
			total += n
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-28s %5d", k, counts[k])
	}
	t.Logf("hostile inputs refused, by reader (load.Open: the checkpoint files also given to checkpoint/load):%s\n  %-28s %5d\nmost heap allocated by one case: %d bytes; slowest case: %v",
		b.String(), "total", total, worst.alloc, worst.elapsed)
}

func heavier(a, b outcome) outcome {
	if b.alloc > a.alloc {
		a.alloc = b.alloc
	}
	if b.elapsed > a.elapsed {
		a.elapsed = b.elapsed
	}
	return a
}

// runGrammar runs every string of a grammar file and returns their count.
func runGrammar(t *testing.T, c badCase) int {
	name := strings.TrimSuffix(filepath.Base(c.path), ".txt")
	g, ok := grammarCheck[name]
	require.True(t, ok, "no grammar %s", name)
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(c.path)))
	require.NoError(t, err)
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := strconv.Unquote(line)
		require.NoError(t, err, "%s: %s", c.path, line)
		n++
		t.Run(c.path+"/"+strconv.Itoa(n), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("input: %q", s)
				}
			}()
			o, ok := guarded(func() error { return g.parse(s) })
			requireRefused(t, o, ok, g.check, nil)
			// The message names the string as given, quoted, or its start
			// when it is long.
			q := strconv.Quote(s)
			if len(q) > 40 {
				q = q[:40]
			}
			require.True(t, strings.Contains(o.err.Error(), q) || strings.Contains(o.err.Error(), s),
				"message does not name %s: %s", q, o.err)
		})
	}
	return n
}

// writeCorpus rewrites testdata/bad from the cases, keeping README.md.
func writeCorpus(t *testing.T, cases []badCase) {
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "README.md" {
			require.NoError(t, os.RemoveAll(filepath.Join(root, e.Name())))
		}
	}
	for _, c := range cases {
		for rel, data := range caseFiles(c) {
			p := filepath.Join(root, filepath.FromSlash(rel))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, data, 0o644))
		}
	}
}

// caseFiles returns the files of a case by path under testdata/bad.
func caseFiles(c badCase) map[string][]byte {
	if c.files == nil {
		return map[string][]byte{c.path: c.data}
	}
	out := map[string][]byte{}
	for name, data := range c.files {
		out[c.path+"/"+name] = data
	}
	return out
}

// checkCorpus requires testdata/bad to hold exactly the cases' files, each
// as the cases describe it and at most maxCaseFile bytes.
func checkCorpus(t *testing.T, cases []badCase) {
	want := map[string][]byte{}
	for _, c := range cases {
		for rel, data := range caseFiles(c) {
			require.NotContains(t, want, rel, "two cases write %s", rel)
			require.LessOrEqual(t, len(data), maxCaseFile, rel)
			want[rel] = data
		}
	}
	var stale []string
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "README.md" {
			return nil
		}
		seen[rel] = true
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if w, ok := want[rel]; !ok || !bytes.Equal(got, w) {
			stale = append(stale, rel)
		}
		return nil
	})
	require.NoError(t, err)
	for rel := range want {
		if !seen[rel] {
			stale = append(stale, rel)
		}
	}
	slices.Sort(stale)
	if len(stale) > 10 {
		stale = append(stale[:10], "...")
	}
	require.Empty(t, stale, "testdata/bad differs from cases_test.go: run go test ./internal/badinput -run TestBadCorpus -update")
}

// TestBadCorpusBases checks that the valid files the truncations cut are
// read without error: a truncation is hostile only if the whole is not.
func TestBadCorpusBases(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"base.safetensors": stValid(),
		"base.gguf":        ggufValid().build().b,
		"base.npy":         npyFile(npyValidDict, make([]byte, 24)),
		"base.dat":         datValid().b,
		"base.npz":         zipFile(zipMember{name: "w.npy", data: npyFile(npyValidDict, make([]byte, 24))}),
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		reader := strings.TrimPrefix(filepath.Ext(name), ".")
		if reader == "dat" {
			reader = "imatrix"
		}
		c := badCase{path: reader + "/" + name}
		require.NoError(t, entry(c, p), name)
	}
	// The shrunk loader-layout checkpoints the layout cases change.
	for _, l := range []string{"tcast", "compressed-tensors", "gpt-oss", "modelopt", "fp8-block"} {
		p := filepath.Join(dir, l+".safetensors")
		require.NoError(t, os.WriteFile(p, fixtureModel(l, func(map[string]*stEntry, map[string]string) {}), 0o644))
		require.NoError(t, loadOpen(p), l)
		c, err := load.Open(p)
		require.NoError(t, err)
		info, err := c.Info("model.layers.0.mlp.down_proj.weight")
		require.NoError(t, err, l)
		require.True(t, info.Quantized(), l)
		require.NoError(t, c.Close())
	}
	for _, c := range []badCase{
		{path: "index/base", files: map[string][]byte{safetensors.IndexFileName: []byte(indexValid), "model-00001-of-00001.safetensors": indexShard()}},
		{path: "config/config-json/base", files: map[string][]byte{"config.json": configLlama("")}},
		{path: "config/info-json/base"},
		{path: "config/tcast-metadata/base", files: map[string][]byte{"model.safetensors": stFile(
			`{"__metadata__":{"tcast.format":"1","tcast.layout":"tcast","tcast.weights":"{}"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}`, make([]byte, 16))}},
	} {
		p := filepath.Join(dir, filepath.FromSlash(c.path))
		if c.files == nil {
			p = filepath.Join("..", "..", "checkpoint", "castdir", "testdata", "golden", "nvfp4")
		}
		for name, data := range c.files {
			require.NoError(t, os.MkdirAll(p, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, name), data, 0o644))
		}
		require.NoError(t, entry(c, p), c.path)
	}
}
