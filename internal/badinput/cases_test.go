package badinput

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// A badCase is one hostile input of the corpus: a file, or a directory of
// files for the readers that take one (a sharded index, a cast directory, a
// model directory with its configs).
type badCase struct {
	// path is the case's path under testdata/bad: "<reader>/<name>".
	path string
	// data is a single file's content; nil for a directory case.
	data []byte
	// files are a directory case's files, by name in the directory.
	files map[string][]byte
	// names is the base name the error message must name ("" = the base
	// name of path, or for a directory case the file the reader is given).
	names string
	// want are further substrings the message must hold: the field, tensor,
	// key or offset at fault.
	want []string
	// check overrides the reader's typed-error check (a key of checks).
	check string
}

// reader returns the reader a case is for: the first element of its path.
func (c badCase) reader() string { return strings.SplitN(c.path, "/", 2)[0] }

// corpus returns every case of the corpus, the grammar files included, in a
// deterministic order.
func corpus() []badCase {
	var cs []badCase
	cs = append(cs, safetensorsCases()...)
	cs = append(cs, indexCases()...)
	cs = append(cs, ggufCases()...)
	cs = append(cs, splitCases()...)
	cs = append(cs, npyCases()...)
	cs = append(cs, npzCases()...)
	cs = append(cs, configCases()...)
	cs = append(cs, imatrixCases()...)
	cs = append(cs, grammarFiles()...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].path < cs[j].path })
	return cs
}

// ---------------------------------------------------------------- safetensors

// stFile builds a safetensors file: the 8-byte little-endian length of hdr,
// hdr, and data.
func stFile(hdr string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	b = append(b, hdr...)
	return append(b, data...)
}

// stRaw builds a file whose length prefix is n whatever the header.
func stRaw(n uint64, hdr string) []byte {
	b := binary.LittleEndian.AppendUint64(nil, n)
	return append(b, hdr...)
}

// stValidHeader is the header of the valid base file: two tensors (F32 [2,3]
// at [0,24) and BF16 [4] at [24,32)) and one metadata key.
const stValidHeader = `{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]}}`

// stValid is the valid base file the truncations cut.
func stValid() []byte { return stFile(stValidHeader, make([]byte, 32)) }

// stTensor is a one-tensor header with the given fields (JSON fragments).
func stTensor(name, dtype, shape, offsets string) string {
	return `{"` + name + `":{"dtype":` + dtype + `,"shape":` + shape + `,"data_offsets":` + offsets + `}}`
}

func safetensorsCases() []badCase {
	var cs []badCase
	add := func(name string, data []byte, want ...string) {
		cs = append(cs, badCase{path: "safetensors/" + name + ".safetensors", data: data, want: want})
	}
	valid := stValid()
	hdrEnd := 8 + len(stValidHeader)
	// Truncations of the valid file: every byte of the length prefix and of
	// the header (each JSON token boundary among them), the data start, the
	// start of each tensor's data, inside it, and one byte short.
	for _, n := range cutPoints(len(valid), 0, hdrEnd, hdrEnd, hdrEnd+1, hdrEnd+12, hdrEnd+24, hdrEnd+28, len(valid)-1) {
		cs = append(cs, badCase{path: fmt.Sprintf("safetensors/truncated/cut-%04d.safetensors", n), data: valid[:n], want: []string{"offset"}})
	}
	// The header cut at every byte with the length prefix telling the
	// truth: every prefix of the JSON reaches the parser.
	for n := 1; n < len(stValidHeader); n++ {
		cs = append(cs, badCase{path: fmt.Sprintf("safetensors/truncated-header/json-%03d.safetensors", n),
			data: stFile(stValidHeader[:n], nil), want: []string{"offset"}})
	}
	// Lengths near the int64 and uint64 limits.
	add("hdrlen-max-int64", stRaw(math.MaxInt64, "{}"), "header")
	add("hdrlen-2p63", stRaw(1<<63, "{}"), "header")
	add("hdrlen-max-uint64", stRaw(math.MaxUint64, "{}"), "header")
	add("hdrlen-over-limit", stRaw(100_000_001, "{}"), "header")
	add("hdrlen-past-eof", stRaw(4096, "{}"), "header")
	add("hdrlen-zero", stRaw(0, ""), "header")
	// Not a JSON object.
	add("hdr-not-json", stFile("xyz!", nil), "offset")
	add("hdr-array", stFile("[]", nil), "offset")
	add("hdr-null", stFile("null", nil), "offset")
	add("hdr-string", stFile(`"abc"`, nil), "offset")
	add("hdr-trailing-garbage", stFile(`{} xyz`, nil), "offset")
	add("hdr-two-objects", stFile(`{}{}`, nil), "offset")
	add("hdr-nul-bytes", stFile("\x00\x00\x00\x00", nil), "offset")
	add("hdr-deep-nesting", stFile(`{"a":{"dtype":"F32","shape":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`,"data_offsets":[0,0]}}`, nil), "shape")
	// Names.
	add("name-not-utf8", stFile(stTensor("w\xff\xfe", `"F32"`, "[1]", "[0,4]"), make([]byte, 4)), "UTF-8")
	add("name-duplicate", stFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), `"w"`)
	// Dtypes.
	add("dtype-unknown", stFile(stTensor("w", `"F128"`, "[1]", "[0,16]"), make([]byte, 16)), `"w"`, "F128")
	add("dtype-lowercase", stFile(stTensor("w", `"f32"`, "[1]", "[0,4]"), make([]byte, 4)), `"w"`, "f32")
	add("dtype-number", stFile(stTensor("w", `3`, "[1]", "[0,4]"), make([]byte, 4)), `"w"`, "dtype")
	add("dtype-missing", stFile(`{"w":{"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), `"w"`, "dtype")
	add("dtype-not-utf8", stFile(stTensor("w", "\"F3\xff\"", "[1]", "[0,4]"), make([]byte, 4)), "UTF-8")
	// Shapes.
	add("shape-negative", stFile(stTensor("w", `"F32"`, "[-1]", "[0,4]"), make([]byte, 4)), `"w"`, "shape")
	add("shape-2p63", stFile(stTensor("w", `"F32"`, "[9223372036854775808]", "[0,4]"), make([]byte, 4)), `"w"`, "shape")
	add("shape-2p64", stFile(stTensor("w", `"F32"`, "[18446744073709551616]", "[0,4]"), make([]byte, 4)), `"w"`, "shape")
	add("shape-product-overflow", stFile(stTensor("w", `"F32"`, "[4294967296,4294967296]", "[0,4]"), make([]byte, 4)), `"w"`)
	add("shape-bytes-overflow", stFile(stTensor("w", `"F64"`, "[2305843009213693952]", "[0,8]"), make([]byte, 8)), `"w"`)
	add("shape-float", stFile(stTensor("w", `"F32"`, "[1.5]", "[0,4]"), make([]byte, 4)), `"w"`, "shape")
	add("shape-exp-inf", stFile(stTensor("w", `"F32"`, "[1e999]", "[0,4]"), make([]byte, 4)), `"w"`, "shape")
	add("shape-string", stFile(stTensor("w", `"F32"`, `["1"]`, "[0,4]"), make([]byte, 4)), `"w"`, "shape")
	add("shape-not-array", stFile(stTensor("w", `"F32"`, `4`, "[0,4]"), make([]byte, 4)), `"w"`, "shape")
	add("shape-rank-65", stFile(stTensor("w", `"F32"`, "["+strings.Repeat("1,", 64)+"1]", "[0,4]"), make([]byte, 4)), `"w"`, "shape")
	add("shape-zero-dim-data", stFile(stTensor("w", `"F32"`, "[0,4]", "[0,16]"), make([]byte, 16)), `"w"`)
	add("shape-missing", stFile(`{"w":{"dtype":"F32","data_offsets":[0,4]}}`, make([]byte, 4)), `"w"`, "shape")
	// Offsets.
	add("offsets-reversed", stFile(stTensor("w", `"F32"`, "[1]", "[4,0]"), make([]byte, 4)), `"w"`, "offset")
	add("offsets-past-eof", stFile(stTensor("w", `"F32"`, "[1024]", "[0,4096]"), make([]byte, 4)), `"w"`, "offset")
	add("offsets-max-int64", stFile(stTensor("w", `"F32"`, "[1]", "[9223372036854775803,9223372036854775807]"), make([]byte, 4)), `"w"`, "offset")
	add("offsets-max-uint64", stFile(stTensor("w", `"F32"`, "[1]", "[18446744073709551611,18446744073709551615]"), make([]byte, 4)), `"w"`, "offset")
	add("offsets-2p64", stFile(stTensor("w", `"F32"`, "[1]", "[0,18446744073709551616]"), make([]byte, 4)), `"w"`, "data_offsets")
	add("offsets-negative", stFile(stTensor("w", `"F32"`, "[1]", "[-4,0]"), make([]byte, 4)), `"w"`, "data_offsets")
	add("offsets-float", stFile(stTensor("w", `"F32"`, "[1]", "[0.5,4.5]"), make([]byte, 5)), `"w"`, "data_offsets")
	add("offsets-exp-inf", stFile(stTensor("w", `"F32"`, "[1]", "[0,1e999]"), make([]byte, 4)), `"w"`, "data_offsets")
	add("offsets-one", stFile(stTensor("w", `"F32"`, "[1]", "[4]"), make([]byte, 4)), `"w"`, "data_offsets")
	add("offsets-three", stFile(stTensor("w", `"F32"`, "[1]", "[0,4,8]"), make([]byte, 8)), `"w"`, "data_offsets")
	add("offsets-missing", stFile(`{"w":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)), `"w"`, "data_offsets")
	add("offsets-size-mismatch", stFile(stTensor("w", `"F32"`, "[2]", "[0,4]"), make([]byte, 4)), `"w"`)
	add("offsets-overlap", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)), "offset")
	add("offsets-same", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)), "offset")
	add("offsets-hole", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, make([]byte, 12)), "offset")
	add("offsets-trailing-data", stFile(stTensor("w", `"F32"`, "[1]", "[0,4]"), make([]byte, 12)), "offset")
	// Entries and metadata of the wrong kind.
	add("entry-not-object", stFile(`{"w":[1,2]}`, nil), `"w"`)
	add("metadata-not-object", stFile(`{"__metadata__":[1]}`, nil), "__metadata__")
	add("metadata-number-value", stFile(`{"__metadata__":{"format":1}}`, nil), "__metadata__", "format")
	add("metadata-inf-value", stFile(`{"__metadata__":{"x":1e999}}`, nil), "__metadata__", "x")
	add("metadata-null-value", stFile(`{"__metadata__":{"x":null}}`, nil), "__metadata__", "x")
	add("metadata-nested", stFile(`{"__metadata__":{"x":{"y":"z"}}}`, nil), "__metadata__", "x")
	add("metadata-twice", stFile(`{"__metadata__":{},"__metadata__":{}}`, nil), "__metadata__")
	return cs
}

// cutPoints returns every length in [0, hdrEnd) and the extra lengths given
// (below full), sorted and without repeats: the truncations of a file of
// full bytes.
func cutPoints(full, from, hdrEnd int, extra ...int) []int {
	seen := map[int]bool{}
	var out []int
	for n := from; n < hdrEnd; n++ {
		seen[n] = true
		out = append(out, n)
	}
	for _, n := range extra {
		if n >= 0 && n < full && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// ---------------------------------------------------------------- sharded index

// indexShard is the valid shard of the index cases: tensor "a" of stValid.
func indexShard() []byte {
	return stFile(`{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}`, make([]byte, 24))
}

const indexValid = `{"metadata":{"total_size":24},"weight_map":{"a":"model-00001-of-00001.safetensors"}}`

func indexCases() []badCase {
	var cs []badCase
	const idx = "model.safetensors.index.json"
	const shard = "model-00001-of-00001.safetensors"
	add := func(name, index string, extra map[string][]byte, want ...string) {
		files := map[string][]byte{idx: []byte(index)}
		if extra == nil {
			files[shard] = indexShard()
		}
		for k, v := range extra {
			files[k] = v
		}
		cs = append(cs, badCase{path: "index/" + name, files: files, names: idx, want: want})
	}
	// A shard that cannot be opened is the operating system's error
	// (errors.Is(err, fs.ErrNotExist), *fs.PathError), wrapped with the index.
	addFS := func(name, index string, want ...string) {
		cs = append(cs, badCase{path: "index/" + name, files: map[string][]byte{idx: []byte(index), shard: indexShard()},
			names: idx, want: want, check: "fs.PathError"})
	}
	// The index cut at every byte.
	for n := 0; n < len(indexValid); n++ {
		add(fmt.Sprintf("truncated/json-%03d", n), indexValid[:n], nil)
	}
	add("not-json", "model weights here", nil)
	add("array", `[]`, nil)
	add("weight-map-missing", `{"metadata":{}}`, nil, "weight_map")
	// A model's config.json where the index should be: another kind of file.
	add("is-config", `{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8}`, nil, "weight_map")
	add("weight-map-array", `{"weight_map":["a"]}`, nil, "weight_map")
	add("weight-map-number-value", `{"weight_map":{"a":1}}`, nil, `"a"`)
	add("weight-map-null-value", `{"weight_map":{"a":null}}`, nil, `"a"`)
	add("weight-map-duplicate", `{"weight_map":{"a":"`+shard+`","a":"`+shard+`"}}`, nil, `"a"`)
	add("name-not-utf8", "{\"weight_map\":{\"a\xff\":\""+shard+"\"}}", nil, "UTF-8")
	add("shard-dotdot", `{"weight_map":{"a":"../`+shard+`"}}`, nil, "../"+shard)
	add("shard-absolute", `{"weight_map":{"a":"/etc/passwd"}}`, nil, "/etc/passwd")
	add("shard-empty-name", `{"weight_map":{"a":""}}`, nil, `"a"`)
	add("shard-nul", `{"weight_map":{"a":"x\u0000.safetensors"}}`, map[string][]byte{shard: indexShard()},
		`"x\x00.safetensors"`, "invalid file name")
	addFS("shard-missing", `{"weight_map":{"a":"model-00002-of-00002.safetensors"}}`, "model-00002-of-00002.safetensors")
	add("shard-is-index", `{"weight_map":{"a":"`+idx+`"}}`, nil)
	add("tensor-not-in-shard", `{"weight_map":{"a":"`+shard+`","zz":"`+shard+`"}}`, nil, `"zz"`)
	add("total-size-negative", `{"metadata":{"total_size":-1},"weight_map":{"a":"`+shard+`"}}`, nil, "total_size")
	add("total-size-inf", `{"metadata":{"total_size":1e999},"weight_map":{"a":"`+shard+`"}}`, nil, "total_size")
	add("total-size-2p64", `{"metadata":{"total_size":18446744073709551616},"weight_map":{"a":"`+shard+`"}}`, nil, "total_size")
	add("total-size-string", `{"metadata":{"total_size":"24"},"weight_map":{"a":"`+shard+`"}}`, nil, "total_size")
	add("metadata-array", `{"metadata":[],"weight_map":{"a":"`+shard+`"}}`, nil, "metadata")
	add("shard-truncated", indexValid, map[string][]byte{shard: indexShard()[:20]}, shard)
	add("shard-offsets-past-eof", indexValid, map[string][]byte{shard: stFile(`{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}`, make([]byte, 8))}, shard, `"a"`)
	add("shard-is-gguf", indexValid, map[string][]byte{shard: []byte("GGUF\x03\x00\x00\x00")}, shard)
	return cs
}

// ---------------------------------------------------------------- GGUF

// ggufEnc writes a GGUF file field by field, recording where each field
// starts, so that truncations can cut at every boundary.
type ggufEnc struct {
	b      []byte
	fields []ggufField
}

type ggufField struct {
	off   int
	label string
}

func (e *ggufEnc) mark(label string) { e.fields = append(e.fields, ggufField{len(e.b), label}) }
func (e *ggufEnc) u32(label string, v uint32) {
	e.mark(label)
	e.b = binary.LittleEndian.AppendUint32(e.b, v)
}
func (e *ggufEnc) u64(label string, v uint64) {
	e.mark(label)
	e.b = binary.LittleEndian.AppendUint64(e.b, v)
}
func (e *ggufEnc) raw(label string, p []byte) {
	e.mark(label)
	e.b = append(e.b, p...)
}
func (e *ggufEnc) str(label, s string) {
	e.u64(label+".len", uint64(len(s)))
	if s != "" {
		e.raw(label+".bytes", []byte(s))
	}
}

// GGUF value types.
const (
	gU8, gI8, gU16, gI16, gU32, gI32, gF32, gBool, gStr, gArr, gU64, gI64, gF64 = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
)

// ggufTensor is one tensor info.
type ggufTensor struct {
	name   string
	dims   []uint64
	typ    uint32
	offset uint64
}

// ggufSpec describes a GGUF file: the header counts (taken from the lists
// unless set), a writer of the key/values, and the tensor infos.
type ggufSpec struct {
	magic       string
	version     uint32
	nTensors    *uint64
	nKV         *uint64
	kvs         func(e *ggufEnc)
	kvCount     int
	tensors     []ggufTensor
	align       int
	dataLen     int
	noDataStart bool
}

func (s ggufSpec) build() *ggufEnc {
	e := &ggufEnc{}
	magic := s.magic
	if magic == "" {
		magic = "GGUF"
	}
	e.raw("magic", []byte(magic))
	v := s.version
	if v == 0 {
		v = 3
	}
	e.u32("version", v)
	nt := uint64(len(s.tensors))
	if s.nTensors != nil {
		nt = *s.nTensors
	}
	e.u64("tensor_count", nt)
	nkv := uint64(s.kvCount)
	if s.nKV != nil {
		nkv = *s.nKV
	}
	e.u64("kv_count", nkv)
	if s.kvs != nil {
		s.kvs(e)
	}
	for i, t := range s.tensors {
		p := fmt.Sprintf("tensor%d", i)
		e.str(p+".name", t.name)
		e.u32(p+".n_dims", uint32(len(t.dims)))
		for j, d := range t.dims {
			e.u64(fmt.Sprintf("%s.dim%d", p, j), d)
		}
		e.u32(p+".type", t.typ)
		e.u64(p+".offset", t.offset)
	}
	align := s.align
	if align == 0 {
		align = 32
	}
	if !s.noDataStart {
		for len(e.b)%align != 0 {
			e.b = append(e.b, 0)
		}
		e.mark("data")
		e.b = append(e.b, make([]byte, s.dataLen)...)
	}
	return e
}

func u64p(v uint64) *uint64 { return &v }

// ggufValidKVs writes the key/values of the valid base file (7 pairs).
func ggufValidKVs(e *ggufEnc) {
	e.str("kv0.key", "general.architecture")
	e.u32("kv0.type", gStr)
	e.str("kv0.value", "llama")
	e.str("kv1.key", "general.alignment")
	e.u32("kv1.type", gU32)
	e.u32("kv1.value", 32)
	e.str("kv2.key", "general.name")
	e.u32("kv2.type", gStr)
	e.str("kv2.value", "bad")
	e.str("kv3.key", "test.f32")
	e.u32("kv3.type", gF32)
	e.u32("kv3.value", math.Float32bits(1.5))
	e.str("kv4.key", "test.bool")
	e.u32("kv4.type", gBool)
	e.raw("kv4.value", []byte{1})
	e.str("kv5.key", "test.u8s")
	e.u32("kv5.type", gArr)
	e.u32("kv5.elem", gU8)
	e.u64("kv5.count", 3)
	e.raw("kv5.items", []byte{1, 2, 3})
	e.str("kv6.key", "test.strs")
	e.u32("kv6.type", gArr)
	e.u32("kv6.elem", gStr)
	e.u64("kv6.count", 2)
	e.str("kv6.item0", "x")
	e.str("kv6.item1", "yz")
}

// ggufValid is the valid base file: 7 key/values and three tensors, F32
// [2,4] (32 bytes), F16 [8] (16 bytes) and Q8_0 [32] (34 bytes), at
// aligned offsets 0, 32 and 64.
func ggufValid() ggufSpec {
	return ggufSpec{kvs: ggufValidKVs, kvCount: 7, tensors: []ggufTensor{
		{"a", []uint64{4, 2}, 0, 0},
		{"b", []uint64{8}, 1, 32},
		{"c", []uint64{32}, 8, 64},
	}, dataLen: 98}
}

// ggufOne is a file with one key/value written by kv and one F32 tensor.
func ggufOne(kv func(e *ggufEnc)) ggufSpec {
	return ggufSpec{kvs: kv, kvCount: 1, tensors: []ggufTensor{{"a", []uint64{4}, 0, 0}}, dataLen: 16}
}

// ggufT is a file with the given tensors and 64 bytes of data.
func ggufT(ts ...ggufTensor) ggufSpec { return ggufSpec{tensors: ts, dataLen: 64} }

func ggufCases() []badCase {
	var cs []badCase
	add := func(name string, s ggufSpec, want ...string) {
		cs = append(cs, badCase{path: "gguf/" + name + ".gguf", data: s.build().b, want: want})
	}
	// Truncations: at every field boundary of the valid file, one byte into
	// every field of more than one byte, at the data start and inside the
	// data.
	e := ggufValid().build()
	full := e.b
	cuts := map[int]string{}
	for i, f := range e.fields {
		end := len(full)
		if i+1 < len(e.fields) {
			end = e.fields[i+1].off
		}
		cuts[f.off] = "at-" + f.label
		if end-f.off > 1 {
			cuts[f.off+1] = "in-" + f.label
		}
	}
	data := e.fields[len(e.fields)-1].off
	for _, n := range []int{data - 1, data + 16, data + 33, data + 64, data + 80, len(full) - 1} {
		if _, ok := cuts[n]; !ok {
			cuts[n] = "in-data"
		}
	}
	for n, label := range cuts {
		if n >= len(full) {
			continue
		}
		cs = append(cs, badCase{path: fmt.Sprintf("gguf/truncated/cut-%04d-%s.gguf", n, label), data: full[:n], want: []string{"offset"}})
	}
	// Header.
	add("magic-bad", ggufSpec{magic: "GGUG"}, "magic")
	// A safetensors file under a GGUF name: another kind of file.
	cs = append(cs, badCase{path: "gguf/is-safetensors.gguf", data: stValid(), want: []string{"magic"}})
	add("magic-lowercase", ggufSpec{magic: "gguf"}, "magic")
	add("version-1", ggufSpec{version: 1}, "version")
	add("version-2", ggufSpec{version: 2}, "version")
	add("version-4", ggufSpec{version: 4}, "version")
	add("version-big-endian", ggufSpec{version: 3 << 24}, "big-endian")
	add("version-max", ggufSpec{version: math.MaxUint32}, "version")
	add("tensor-count-2p63", ggufSpec{nTensors: u64p(1 << 63)}, "tensor_count")
	add("tensor-count-max-uint64", ggufSpec{nTensors: u64p(math.MaxUint64)}, "tensor_count")
	add("tensor-count-over-limit", ggufSpec{nTensors: u64p(1<<18 + 1), noDataStart: true}, "tensor_count")
	add("kv-count-2p63", ggufSpec{nKV: u64p(1 << 63)}, "kv_count")
	add("kv-count-max-int64", ggufSpec{nKV: u64p(math.MaxInt64)}, "kv_count")
	add("kv-count-over-limit", ggufSpec{nKV: u64p(1<<18 + 1), noDataStart: true}, "kv_count")
	add("kv-count-more-than-present", ggufSpec{nKV: u64p(9), kvs: ggufValidKVs}, "offset")
	// Keys.
	add("key-len-2p63", ggufOne(func(e *ggufEnc) { e.u64("key.len", 1<<63); e.raw("key", []byte("general.x")) }), "key")
	add("key-len-max-uint64", ggufOne(func(e *ggufEnc) { e.u64("key.len", math.MaxUint64); e.raw("key", []byte("x")) }), "key")
	add("key-len-past-eof", ggufOne(func(e *ggufEnc) { e.u64("key.len", 1<<20); e.raw("key", []byte("x")) }), "key")
	add("key-empty", ggufOne(func(e *ggufEnc) { e.str("key", ""); e.u32("type", gU8); e.raw("v", []byte{1}) }), "key")
	add("key-not-utf8", ggufOne(func(e *ggufEnc) { e.str("key", "general.\xff"); e.u32("type", gU8); e.raw("v", []byte{1}) }), "key")
	add("key-duplicate", ggufSpec{kvCount: 2, kvs: func(e *ggufEnc) {
		e.str("k", "general.name")
		e.u32("t", gStr)
		e.str("v", "a")
		e.str("k", "general.name")
		e.u32("t", gStr)
		e.str("v", "b")
	}, tensors: []ggufTensor{{"a", []uint64{4}, 0, 0}}, dataLen: 16}, "general.name", "duplicate")
	// Values.
	add("value-type-13", ggufOne(func(e *ggufEnc) { e.str("k", "general.x"); e.u32("t", 13); e.u32("v", 0) }), "general.x", "type")
	add("value-type-max", ggufOne(func(e *ggufEnc) { e.str("k", "general.x"); e.u32("t", math.MaxUint32); e.u32("v", 0) }), "general.x", "type")
	add("string-len-2p63", ggufOne(func(e *ggufEnc) {
		e.str("k", "general.name")
		e.u32("t", gStr)
		e.u64("len", 1<<63)
		e.raw("v", []byte("x"))
	}), "general.name", "offset")
	add("string-len-max-int64", ggufOne(func(e *ggufEnc) {
		e.str("k", "general.name")
		e.u32("t", gStr)
		e.u64("len", math.MaxInt64)
		e.raw("v", []byte("x"))
	}), "general.name", "offset")
	add("string-len-max-uint64", ggufOne(func(e *ggufEnc) {
		e.str("k", "general.name")
		e.u32("t", gStr)
		e.u64("len", math.MaxUint64)
		e.raw("v", []byte("x"))
	}), "general.name", "offset")
	add("string-len-past-eof", ggufOne(func(e *ggufEnc) {
		e.str("k", "general.name")
		e.u32("t", gStr)
		e.u64("len", 4096)
		e.raw("v", []byte("x"))
	}), "general.name", "offset")
	add("array-elem-type-bad", ggufOne(func(e *ggufEnc) {
		e.str("k", "general.x")
		e.u32("t", gArr)
		e.u32("et", 77)
		e.u64("n", 1)
		e.u32("v", 0)
	}), "general.x", "type")
	add("array-count-2p63", ggufOne(func(e *ggufEnc) { e.str("k", "general.x"); e.u32("t", gArr); e.u32("et", gU32); e.u64("n", 1<<63) }), "general.x", "offset")
	add("array-count-max-uint64", ggufOne(func(e *ggufEnc) {
		e.str("k", "general.x")
		e.u32("t", gArr)
		e.u32("et", gU8)
		e.u64("n", math.MaxUint64)
	}), "general.x", "offset")
	add("array-count-past-eof", ggufOne(func(e *ggufEnc) { e.str("k", "general.x"); e.u32("t", gArr); e.u32("et", gU64); e.u64("n", 1<<20) }), "general.x", "offset")
	add("array-strings-count-huge", ggufOne(func(e *ggufEnc) { e.str("k", "general.x"); e.u32("t", gArr); e.u32("et", gStr); e.u64("n", 1<<62) }), "general.x", "offset")
	add("array-string-len-2p63", ggufOne(func(e *ggufEnc) {
		e.str("k", "general.x")
		e.u32("t", gArr)
		e.u32("et", gStr)
		e.u64("n", 1)
		e.u64("len", 1<<63)
	}), "general.x", "offset")
	add("array-nested-deep", ggufOne(func(e *ggufEnc) {
		e.str("k", "general.x")
		e.u32("t", gArr)
		for range 64 {
			e.u32("et", gArr)
			e.u64("n", 1)
		}
		e.u32("et", gU8)
		e.u64("n", 0)
	}), "general.x", "nested")
	add("alignment-zero", ggufOne(func(e *ggufEnc) { e.str("k", "general.alignment"); e.u32("t", gU32); e.u32("v", 0) }), "general.alignment", "alignment")
	add("alignment-three", ggufOne(func(e *ggufEnc) { e.str("k", "general.alignment"); e.u32("t", gU32); e.u32("v", 3) }), "general.alignment", "alignment")
	add("alignment-2p31", ggufOne(func(e *ggufEnc) { e.str("k", "general.alignment"); e.u32("t", gU32); e.u32("v", 1<<31) }), "data section")
	add("alignment-string", ggufOne(func(e *ggufEnc) { e.str("k", "general.alignment"); e.u32("t", gStr); e.str("v", "32") }), "general.alignment", "alignment")
	add("alignment-u64", ggufOne(func(e *ggufEnc) { e.str("k", "general.alignment"); e.u32("t", gU64); e.u64("v", 32) }), "general.alignment", "alignment")
	// Tensor infos.
	add("tensor-name-len-2p63", ggufSpec{nTensors: u64p(1), kvs: func(e *ggufEnc) { e.u64("name.len", 1<<63); e.raw("name", []byte("a")) }}, "offset")
	add("tensor-name-len-max-uint64", ggufSpec{nTensors: u64p(1), kvs: func(e *ggufEnc) { e.u64("name.len", math.MaxUint64); e.raw("name", []byte("a")) }}, "offset")
	add("tensor-name-64-bytes", ggufT(ggufTensor{strings.Repeat("n", 64), []uint64{4}, 0, 0}), "offset", "64")
	add("tensor-name-empty", ggufT(ggufTensor{"", []uint64{4}, 0, 0}), "offset")
	add("tensor-name-not-utf8", ggufT(ggufTensor{"blk.\xff.w", []uint64{4}, 0, 0}), "UTF-8")
	add("tensor-name-duplicate", ggufT(ggufTensor{"a", []uint64{4}, 0, 0}, ggufTensor{"a", []uint64{4}, 0, 32}), `"a"`, "duplicate")
	add("tensor-n-dims-5", ggufT(ggufTensor{"a", []uint64{1, 1, 1, 1, 4}, 0, 0}), `"a"`, "n_dims")
	add("tensor-n-dims-max", ggufSpec{nTensors: u64p(1), kvs: func(e *ggufEnc) { e.str("name", "a"); e.u32("n_dims", math.MaxUint32) }}, `"a"`, "n_dims")
	add("tensor-dim-2p63", ggufT(ggufTensor{"a", []uint64{1 << 63}, 0, 0}), `"a"`, "dimension")
	add("tensor-dim-minus-one", ggufT(ggufTensor{"a", []uint64{math.MaxUint64}, 0, 0}), `"a"`, "dimension")
	add("tensor-dims-product-overflow", ggufT(ggufTensor{"a", []uint64{1 << 32, 1 << 32}, 0, 0}), `"a"`, "overflow")
	add("tensor-dims-bytes-overflow", ggufT(ggufTensor{"a", []uint64{1 << 31, 1 << 31}, 0, 0}), `"a"`, "overflow")
	add("tensor-type-4-removed", ggufT(ggufTensor{"a", []uint64{32}, 4, 0}), `"a"`, "type")
	add("tensor-type-99", ggufT(ggufTensor{"a", []uint64{4}, 99, 0}), `"a"`, "type")
	add("tensor-type-max", ggufT(ggufTensor{"a", []uint64{4}, math.MaxUint32, 0}), `"a"`, "type")
	add("tensor-q4-0-partial-block", ggufT(ggufTensor{"a", []uint64{20}, 2, 0}), `"a"`, "block")
	add("tensor-offset-unaligned", ggufT(ggufTensor{"a", []uint64{4}, 0, 4}), `"a"`, "alignment")
	add("tensor-offset-past-eof", ggufT(ggufTensor{"a", []uint64{4}, 0, 4096}), `"a"`, "end of the file")
	add("tensor-offset-2p63", ggufT(ggufTensor{"a", []uint64{4}, 0, 1 << 63}), `"a"`, "offset")
	add("tensor-offset-max-int64-aligned", ggufT(ggufTensor{"a", []uint64{4}, 0, math.MaxInt64 - 31}), `"a"`, "offset")
	add("tensor-size-past-eof", ggufT(ggufTensor{"a", []uint64{1024}, 0, 0}), `"a"`, "end of the file")
	add("tensor-overlap", ggufT(ggufTensor{"a", []uint64{8}, 0, 0}, ggufTensor{"b", []uint64{8}, 0, 0}), "overlaps")
	add("tensor-overlap-partial", ggufT(ggufTensor{"a", []uint64{16}, 0, 0}, ggufTensor{"b", []uint64{8}, 0, 32}), "overlaps")
	add("data-start-past-eof", ggufSpec{tensors: []ggufTensor{{"a", []uint64{4}, 0, 0}}, noDataStart: true}, "offset")
	return cs
}

// ---------------------------------------------------------------- npy

// npyHeader builds an .npy file of version 1.0 with the dictionary dict
// (padded with spaces and a newline to a multiple of 64 bytes) and data.
func npyFile(dict string, data []byte) []byte {
	n := 10 + len(dict) + 1
	pad := (64 - n%64) % 64
	h := dict + strings.Repeat(" ", pad) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(b[8:], uint16(len(h)))
	b = append(b, h...)
	return append(b, data...)
}

const npyValidDict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"

func npyCases() []badCase {
	var cs []badCase
	add := func(name string, data []byte, want ...string) {
		cs = append(cs, badCase{path: "npy/" + name + ".npy", data: data, want: want})
	}
	valid := npyFile(npyValidDict, make([]byte, 24))
	hdrEnd := len(valid) - 24
	// Truncations: every byte of the magic, version, length and dictionary,
	// then the data start, inside and one short.
	for _, n := range cutPoints(len(valid), 0, hdrEnd, hdrEnd, hdrEnd+1, hdrEnd+4, hdrEnd+12, len(valid)-1) {
		cs = append(cs, badCase{path: fmt.Sprintf("npy/truncated/cut-%03d.npy", n), data: valid[:n], want: []string{"offset"}})
	}
	// The dictionary cut at every byte with the length telling the truth.
	for n := 1; n < len(npyValidDict); n++ {
		b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
		binary.LittleEndian.PutUint16(b[8:], uint16(n))
		b = append(b, npyValidDict[:n]...)
		cs = append(cs, badCase{path: fmt.Sprintf("npy/truncated-header/dict-%02d.npy", n), data: append(b, make([]byte, 24)...), want: []string{"offset"}})
	}
	f := func(descr, fortran, shape string) string {
		return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }"
	}
	add("magic-bad", append([]byte("\x93NUMPZ\x01\x00"), valid[8:]...), "magic")
	// An .npz archive and a safetensors file under an .npy name.
	add("is-npz", zipFile(zipMember{name: "w.npy", data: valid}), "magic")
	add("is-safetensors", stValid(), "magic")
	add("version-0-0", append([]byte("\x93NUMPY\x00\x00"), valid[8:]...), "version")
	add("version-4-0", append([]byte("\x93NUMPY\x04\x00"), valid[8:]...), "version")
	add("version-1-1", append([]byte("\x93NUMPY\x01\x01"), valid[8:]...), "version")
	add("hdrlen-past-eof", append([]byte("\x93NUMPY\x01\x00\xff\xff"), valid[10:]...), "header")
	add("hdrlen-v2-max", append([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"), valid[10:]...), "header length")
	add("hdrlen-v3-2p31", append([]byte("\x93NUMPY\x03\x00\x00\x00\x00\x80"), valid[10:]...), "header length")
	add("hdr-v3-not-utf8", func() []byte {
		d := []byte(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), '\xff': 1}", make([]byte, 24)))
		d[6] = 3
		// version 3 has a 4-byte length: rebuild the prefix.
		h := d[10 : len(d)-24]
		b := append([]byte("\x93NUMPY\x03\x00"), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[8:], uint32(len(h)))
		return append(append(b, h...), make([]byte, 24)...)
	}(), "UTF-8")
	add("dict-not-dict", npyFile("[1, 2, 3]", nil), "offset")
	add("dict-empty", npyFile("{}", nil), "offset")
	add("descr-missing", npyFile("{'fortran_order': False, 'shape': (2, 3), }", make([]byte, 24)), "descr")
	add("shape-missing", npyFile("{'descr': '<f4', 'fortran_order': False, }", make([]byte, 24)), "shape")
	add("fortran-missing", npyFile("{'descr': '<f4', 'shape': (2, 3), }", make([]byte, 24)), "fortran_order")
	add("key-extra", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1, }", make([]byte, 24)), "x")
	add("key-duplicate", npyFile("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 24)), "descr")
	add("descr-unknown", npyFile(f("'<f3'", "False", "(2, 3)"), make([]byte, 24)), "<f3")
	add("descr-object", npyFile(f("'|O'", "False", "(2,)"), make([]byte, 16)), "|O")
	add("descr-structured", npyFile(f("[('a', '<f4')]", "False", "(2,)"), make([]byte, 8)), "descr")
	add("descr-number", npyFile(f("4", "False", "(2,)"), make([]byte, 8)), "descr")
	add("descr-huge-size", npyFile(f("'<f99999999999999999999'", "False", "(2,)"), make([]byte, 8)), "descr")
	add("descr-string-size-2p62", npyFile(f("'<U4611686018427387904'", "False", "(2,)"), make([]byte, 8)), "descr")
	add("fortran-maybe", npyFile(f("'<f4'", "'maybe'", "(2, 3)"), make([]byte, 24)), "fortran_order")
	add("shape-negative", npyFile(f("'<f4'", "False", "(-1, 3)"), make([]byte, 24)), "shape")
	add("shape-2p63", npyFile(f("'<f4'", "False", "(9223372036854775808,)"), make([]byte, 24)), "shape")
	add("shape-2p64", npyFile(f("'<f4'", "False", "(18446744073709551616,)"), make([]byte, 24)), "shape")
	add("shape-product-overflow", npyFile(f("'<f4'", "False", "(4294967296, 4294967296)"), make([]byte, 24)), "shape")
	add("shape-bytes-overflow", npyFile(f("'<f8'", "False", "(2305843009213693952,)"), make([]byte, 24)), "shape")
	add("shape-float", npyFile(f("'<f4'", "False", "(1.5,)"), make([]byte, 24)), "shape")
	add("shape-nan", npyFile(f("'<f4'", "False", "(nan,)"), make([]byte, 24)), "shape")
	add("shape-inf", npyFile(f("'<f4'", "False", "(inf,)"), make([]byte, 24)), "shape")
	add("shape-list", npyFile(f("'<f4'", "False", "[2, 3]"), make([]byte, 24)), "shape")
	add("shape-string", npyFile(f("'<f4'", "False", "'2, 3'"), make([]byte, 24)), "shape")
	add("shape-nested", npyFile(f("'<f4'", "False", "((2,), 3)"), make([]byte, 24)), "shape")
	add("shape-claims-16g", npyFile(f("'<f4'", "False", "(4294967296,)"), make([]byte, 24)), "offset")
	add("shape-zero-with-data", npyFile(f("'<f4'", "False", "(0, 3)"), make([]byte, 24)), "offset")
	add("data-short", npyFile(npyValidDict, make([]byte, 20)), "offset")
	add("data-trailing", npyFile(npyValidDict, make([]byte, 28)), "offset")
	add("dict-not-ascii", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), '\xe9': 1}", make([]byte, 24)), "offset")
	add("dict-nul", npyFile("{'descr': '<f4\x00', 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 24)), "descr")
	add("dict-deep-nesting", npyFile(f("'<f4'", "False", strings.Repeat("(", 3000)+strings.Repeat(")", 3000)), nil), "dimension")
	return cs
}

// ---------------------------------------------------------------- npz

// zipMember is one member of a hand-built zip archive.
type zipMember struct {
	name   string
	data   []byte // as stored
	method uint16
	// usize and csize override the declared sizes (0: the true ones).
	usize, csize uint32
	crc          *uint32
	// zip64 gives the sizes in a Zip64 extra field of the central
	// directory (the 32-bit fields then say 0xFFFFFFFF).
	zip64 *[2]uint64 // uncompressed, compressed
}

// zipFile builds a zip archive by hand, so that the declared sizes, CRCs and
// names can lie.
func zipFile(ms ...zipMember) []byte {
	var b, cd []byte
	le16 := binary.LittleEndian.AppendUint16
	le32 := binary.LittleEndian.AppendUint32
	for _, m := range ms {
		crc := crc32.ChecksumIEEE(m.data)
		if m.crc != nil {
			crc = *m.crc
		}
		cs, us := uint32(len(m.data)), uint32(len(m.data))
		if m.csize != 0 {
			cs = m.csize
		}
		if m.usize != 0 {
			us = m.usize
		}
		var extra []byte
		if m.zip64 != nil {
			us, cs = math.MaxUint32, math.MaxUint32
			extra = le16(extra, 0x0001)
			extra = le16(extra, 16)
			extra = binary.LittleEndian.AppendUint64(extra, m.zip64[0])
			extra = binary.LittleEndian.AppendUint64(extra, m.zip64[1])
		}
		off := uint32(len(b))
		b = le32(b, 0x04034b50)
		b = le16(b, 20)
		b = le16(b, 0)
		b = le16(b, m.method)
		b = le16(b, 0)
		b = le16(b, 0x21)
		b = le32(b, crc)
		b = le32(b, cs)
		b = le32(b, us)
		b = le16(b, uint16(len(m.name)))
		b = le16(b, 0)
		b = append(b, m.name...)
		b = append(b, m.data...)
		cd = le32(cd, 0x02014b50)
		cd = le16(cd, 20)
		cd = le16(cd, 20)
		cd = le16(cd, 0)
		cd = le16(cd, m.method)
		cd = le16(cd, 0)
		cd = le16(cd, 0x21)
		cd = le32(cd, crc)
		cd = le32(cd, cs)
		cd = le32(cd, us)
		cd = le16(cd, uint16(len(m.name)))
		cd = le16(cd, uint16(len(extra)))
		cd = le16(cd, 0)
		cd = le16(cd, 0)
		cd = le16(cd, 0)
		cd = le32(cd, 0)
		cd = le32(cd, off)
		cd = append(cd, m.name...)
		cd = append(cd, extra...)
	}
	cdOff := uint32(len(b))
	b = append(b, cd...)
	b = le32(b, 0x06054b50)
	b = le16(b, 0)
	b = le16(b, 0)
	b = le16(b, uint16(len(ms)))
	b = le16(b, uint16(len(ms)))
	b = le32(b, uint32(len(cd)))
	b = le32(b, cdOff)
	b = le16(b, 0)
	return b
}

// deflated compresses p with archive/zip's deflate (the raw stream).
func deflated(p []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate})
	if err != nil {
		panic(err)
	}
	w.Write(p)
	zw.Close()
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	off, err := zr.File[0].DataOffset()
	if err != nil {
		panic(err)
	}
	return buf.Bytes()[off : off+int64(zr.File[0].CompressedSize64)]
}

func npzCases() []badCase {
	var cs []badCase
	add := func(name string, data []byte, want ...string) {
		cs = append(cs, badCase{path: "npz/" + name + ".npz", data: data, want: want})
	}
	member := npyFile(npyValidDict, make([]byte, 24))
	valid := zipFile(zipMember{name: "w.npy", data: member})
	// Truncations at the zip structure's boundaries: the local header's
	// fields, the name, the member's data, the central directory's fields
	// and name, and every byte of the end-of-central-directory record.
	local := []int{0, 4, 6, 8, 10, 12, 14, 18, 22, 26, 28, 30, 35}
	dataStart := 35
	cdStart := dataStart + len(member)
	for _, n := range []int{dataStart + 10, dataStart + 64, cdStart - 1} {
		local = append(local, n)
	}
	for _, d := range []int{0, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 30, 32, 34, 36, 38, 42, 46, 51} {
		local = append(local, cdStart+d)
	}
	eocd := len(valid) - 22
	for n := eocd; n < len(valid); n++ {
		local = append(local, n)
	}
	for _, n := range cutPoints(len(valid), 0, 0, local...) {
		cs = append(cs, badCase{path: fmt.Sprintf("npz/truncated/cut-%03d.npz", n), data: valid[:n], want: []string{"zip"}})
	}
	crc0 := uint32(0xDEADBEEF) // not 0: a zero CRC-32 means unchecked to archive/zip
	add("not-zip", []byte("this is not an archive at all, just some text\n"), "zip")
	add("npy-not-npz", member, "zip")
	add("member-not-npy", zipFile(zipMember{name: "w.npy", data: []byte("hello, world")}), `"w.npy"`, "magic")
	add("member-bad-header", zipFile(zipMember{name: "w.npy", data: npyFile(strings.Replace(npyValidDict, "<f4", "<f3", 1), make([]byte, 24))}), `"w.npy"`, "<f3")
	add("member-shape-overflow", zipFile(zipMember{name: "w.npy", data: npyFile(strings.Replace(npyValidDict, "(2, 3)", "(4294967296, 4294967296)", 1), nil)}), `"w.npy"`, "shape")
	add("member-data-short", zipFile(zipMember{name: "w.npy", data: member[:len(member)-4]}), `"w.npy"`)
	add("member-duplicate", zipFile(zipMember{name: "w.npy", data: member}, zipMember{name: "w.npy", data: member}), `"w.npy"`, "twice")
	add("member-duplicate-suffix", zipFile(zipMember{name: "w.npy", data: member}, zipMember{name: "w", data: member}), "twice")
	add("member-name-not-utf8", zipFile(zipMember{name: "w\xff.npy", data: member}), "UTF-8")
	add("member-name-empty", zipFile(zipMember{name: "", data: member}), "name")
	add("member-crc-wrong", zipFile(zipMember{name: "w.npy", data: member, crc: &crc0}), `"w.npy"`, "checksum")
	add("member-claims-4g-stored", zipFile(zipMember{name: "w.npy", data: member, usize: math.MaxUint32}), `"w.npy"`)
	add("member-claims-4g-deflate", zipFile(zipMember{name: "w.npy", data: deflated(member), method: zip.Deflate, usize: math.MaxUint32}), `"w.npy"`)
	add("member-csize-past-eof", zipFile(zipMember{name: "w.npy", data: member, csize: 1 << 30, usize: 1 << 30}), `"w.npy"`)
	add("member-zip64-claims-2p63", zipFile(zipMember{name: "w.npy", data: member, zip64: &[2]uint64{1<<63 - 1, 1<<63 - 1}}), `"w.npy"`)
	add("member-zip64-claims-max-uint64", zipFile(zipMember{name: "w.npy", data: member, zip64: &[2]uint64{math.MaxUint64, uint64(len(member))}}), `"w.npy"`)
	add("member-zip64-compressed-2p63", zipFile(zipMember{name: "w.npy", data: member, zip64: &[2]uint64{uint64(len(member)), 1 << 63}}), `"w.npy"`)
	add("member-method-unknown", zipFile(zipMember{name: "w.npy", data: member, method: 99}), `"w.npy"`)
	add("member-deflate-garbage", zipFile(zipMember{name: "w.npy", data: []byte("\xff\xff\xff\xff garbage"), method: zip.Deflate, usize: 100}), `"w.npy"`)
	add("member-header-claims-16g", zipFile(zipMember{name: "w.npy", data: deflated(npyFile(strings.Replace(npyValidDict, "(2, 3)", "(4294967296,)", 1), make([]byte, 24))), method: zip.Deflate}), `"w.npy"`)
	return cs
}

// ---------------------------------------------------------------- imatrix

// datEntry is one entry of a legacy llama.cpp imatrix.dat.
type datEntry struct {
	name        string
	nameLen     *int32 // overrides len(name)
	ncall, nval int32
	values      []float32
}

// datFile builds an imatrix.dat (int32 entry count, then per entry the
// name length, name, ncall, nval and nval float32 values, then an optional
// trailer: int32 chunk count, int32 dataset-name length, name), recording
// where each field starts.
func datFile(count int32, es []datEntry, trailer []byte) *ggufEnc {
	e := &ggufEnc{}
	e.u32("count", uint32(count))
	for i, d := range es {
		p := fmt.Sprintf("entry%d", i)
		n := int32(len(d.name))
		if d.nameLen != nil {
			n = *d.nameLen
		}
		e.u32(p+".name.len", uint32(n))
		e.raw(p+".name", []byte(d.name))
		e.u32(p+".ncall", uint32(d.ncall))
		e.u32(p+".nval", uint32(d.nval))
		e.mark(p + ".values")
		for _, v := range d.values {
			e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(v))
		}
	}
	if trailer != nil {
		e.raw("trailer", trailer)
	}
	return e
}

func i32p(v int32) *int32 { return &v }

// notImatrix is what the message of a *imatrix.NotImatrixError says.
const notImatrix = "is not an importance matrix"

// datMinEntry is the smallest .dat entry: name length, a 1-byte name,
// ncall, nval and one value.
const datMinEntry = 4 + 1 + 4 + 4 + 4

// datValid is the valid base: two entries and a trailer (chunk count 3,
// dataset "calib.txt").
func datValid() *ggufEnc {
	tr := binary.LittleEndian.AppendUint32(nil, 3)
	tr = binary.LittleEndian.AppendUint32(tr, 9)
	tr = append(tr, "calib.txt"...)
	return datFile(2, []datEntry{
		{name: "blk.0.attn_k.weight", ncall: 2, nval: 4, values: []float32{1, 2, 3, 4}},
		{name: "output.weight", ncall: 3, nval: 2, values: []float32{0.5, 8}},
	}, tr)
}

func imatrixCases() []badCase {
	var cs []badCase
	add := func(name string, data []byte, want ...string) {
		cs = append(cs, badCase{path: "imatrix/" + name, data: data, want: want})
	}
	// Truncations of the .dat at every field boundary and one byte into
	// every field, but not where a file may end: after the last entry, or
	// after the trailer's chunk count.
	e := datValid()
	full := e.b
	trailer := e.fields[len(e.fields)-1].off
	mayEnd := map[int]bool{trailer: true, trailer + 4: true}
	cuts := map[int]string{}
	for i, f := range e.fields {
		end := len(full)
		if i+1 < len(e.fields) {
			end = e.fields[i+1].off
		}
		for _, n := range []int{f.off, f.off + 1, (f.off + end) / 2} {
			if n < end && !mayEnd[n] {
				if _, ok := cuts[n]; !ok {
					cuts[n] = f.label
				}
			}
		}
	}
	for n := trailer + 5; n < len(full); n++ {
		cuts[n] = "trailer"
	}
	for n, label := range cuts {
		want := "offset"
		if n < 4+2*datMinEntry {
			// The entry count (2) does not fit: the reader calls such a
			// file no importance matrix at all (*NotImatrixError).
			want = notImatrix
		}
		cs = append(cs, badCase{path: fmt.Sprintf("imatrix/truncated-dat/cut-%03d-%s.dat", n, label), data: full[:n], want: []string{want}})
	}
	one := func(d datEntry) []byte { return datFile(1, []datEntry{d}, nil).b }
	ok := datEntry{name: "w", ncall: 1, nval: 2, values: []float32{1, 2}}
	ok2 := datEntry{name: "blk.0.ffn_up.weight", ncall: 1, nval: 8, values: make([]float32, 8)}
	ok3 := datEntry{name: "blk.0.ffn_down.weight", ncall: 1, nval: 8, values: make([]float32, 8)}
	with := func(f func(*datEntry)) []byte { d := ok; f(&d); return one(d) }
	// A first entry that does not fit, or whose name length is out of
	// range, makes the file no importance matrix (*NotImatrixError,
	// wrapping the *FormatError).
	add("count-zero.dat", datFile(0, []datEntry{ok}, nil).b, notImatrix)
	add("count-negative.dat", datFile(-1, []datEntry{ok}, nil).b, notImatrix)
	add("count-max-int32.dat", datFile(math.MaxInt32, []datEntry{ok}, nil).b, notImatrix)
	add("count-more-than-present.dat", datFile(3, []datEntry{ok, {name: "v", ncall: 1, nval: 1, values: []float32{1}}}, nil).b, notImatrix)
	add("count-one-more-than-present.dat", datFile(3, []datEntry{ok, ok2, ok3}[:2], nil).b, "offset")
	add("name-len-zero.dat", with(func(d *datEntry) { d.nameLen = i32p(0) }), notImatrix)
	add("name-len-negative.dat", with(func(d *datEntry) { d.nameLen = i32p(-1) }), notImatrix)
	add("name-len-max-int32.dat", with(func(d *datEntry) { d.nameLen = i32p(math.MaxInt32) }), notImatrix)
	add("name-len-64.dat", with(func(d *datEntry) { d.name = strings.Repeat("w", 64) }), notImatrix)
	add("second-name-len-64.dat", datFile(2, []datEntry{ok2, {name: strings.Repeat("w", 64), ncall: 1, nval: 1, values: []float32{1}}}, nil).b, "name length")
	add("second-name-len-negative.dat", datFile(2, []datEntry{ok2, {name: "v", nameLen: i32p(-1), ncall: 1, nval: 1, values: []float32{1}}}, nil).b, "name length")
	add("name-nul.dat", with(func(d *datEntry) { d.name = "w\x00x" }), "NUL")
	add("name-not-utf8.dat", with(func(d *datEntry) { d.name = "w\xff" }), "UTF-8")
	add("name-duplicate.dat", datFile(2, []datEntry{ok, ok}, nil).b, `"w"`, "duplicate")
	add("ncall-negative.dat", with(func(d *datEntry) { d.ncall = -1 }), `"w"`, "ncall")
	add("nval-zero.dat", with(func(d *datEntry) { d.nval = 0; d.values = nil }), notImatrix)
	add("nval-negative.dat", with(func(d *datEntry) { d.nval = -2 }), `"w"`, "nval")
	add("nval-max-int32.dat", with(func(d *datEntry) { d.nval = math.MaxInt32 }), `"w"`, "nval")
	add("value-nan.dat", with(func(d *datEntry) { d.values = []float32{1, float32(math.NaN())} }), `"w"`, "NaN")
	add("value-inf.dat", with(func(d *datEntry) { d.values = []float32{float32(math.Inf(1)), 1} }), `"w"`, "Inf")
	add("value-negative.dat", with(func(d *datEntry) { d.values = []float32{1, -1} }), `"w"`, "value")
	trail := func(count, n int32, name string) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(count))
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		return append(b, name...)
	}
	add("trailer-count-negative.dat", datFile(1, []datEntry{ok}, trail(-1, 0, "")).b, "chunk count")
	add("trailer-name-len-negative.dat", datFile(1, []datEntry{ok}, trail(1, -1, "")).b, "dataset name")
	add("trailer-name-len-max-int32.dat", datFile(1, []datEntry{ok}, trail(1, math.MaxInt32, "x")).b, "dataset name")
	add("trailer-name-short.dat", datFile(1, []datEntry{ok}, trail(1, 2, "abcd")).b, "dataset name")
	add("trailer-name-nul.dat", datFile(1, []datEntry{ok}, trail(1, 3, "a\x00b")).b, "NUL")
	add("text.dat", []byte("this is not an importance matrix, it is text\n"), notImatrix)
	// GGUF imatrix files: the golden file cut every 16 bytes, and a GGUF
	// model given as an imatrix.
	g, err := os.ReadFile(filepath.Join("..", "..", "checkpoint", "imatrix", "testdata", "golden.imatrix.gguf"))
	if err != nil {
		panic(err)
	}
	// The file ends with the data of its last tensor padded to the
	// alignment (32): cuts stop before the padding.
	for n := 0; n < len(g)-32; n += 16 {
		want := "offset"
		if n < 8 {
			want = notImatrix
		}
		cs = append(cs, badCase{path: fmt.Sprintf("imatrix/truncated-gguf/cut-%04d.gguf", n), data: g[:n], want: []string{want}})
	}
	add("gguf-model.gguf", ggufValid().build().b, "general.architecture")
	add("gguf-no-imatrix.gguf", ggufSpec{tensors: []ggufTensor{{"a", []uint64{4}, 0, 0}}, dataLen: 16}.build().b, "imatrix")
	return cs
}

// ---------------------------------------------------------------- configs

// configLlama is a valid llama config.json with every field Detect needs,
// with fields replaced or added by repl (a JSON fragment of "key": value
// pairs that comes last, so that it wins).
func configLlama(extra string) []byte {
	s := `{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "intermediate_size": 128, ` +
		`"num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 2048, ` +
		`"rms_norm_eps": 1e-05, "vocab_size": 256, "rope_theta": 10000.0`
	if extra != "" {
		s += ", " + extra
	}
	return []byte(s + "}")
}

func configCases() []badCase {
	var cs []badCase
	// config.json, as tcast convert -layout gguf reads it (ggufmodel.Detect).
	cfg := func(name string, data []byte, check string, want ...string) {
		cs = append(cs, badCase{path: "config/config-json/" + name, files: map[string][]byte{"config.json": data}, names: "config.json", want: want, check: check})
	}
	valid := configLlama("")
	for n := 1; n < len(valid); n += 7 {
		cfg(fmt.Sprintf("truncated/json-%03d", n), valid[:n], "ggufmodel.UnsupportedError", "JSON")
	}
	cfg("not-json", []byte("model_type=llama"), "ggufmodel.UnsupportedError", "JSON")
	cfg("array", []byte(`[{"model_type": "llama"}]`), "ggufmodel.UnsupportedError", "JSON")
	cfg("nan-literal", configLlama(`"rope_theta": NaN`), "ggufmodel.UnsupportedError", "JSON")
	for _, f := range []struct{ name, field, value, want string }{
		{"hidden-negative", "hidden_size", "-64", "hidden_size"},
		{"hidden-zero", "hidden_size", "0", "hidden_size"},
		{"hidden-2p63", "hidden_size", "9223372036854775808", "hidden_size"},
		{"hidden-2p31", "hidden_size", "2147483648", "hidden_size"},
		{"hidden-exp-inf", "hidden_size", "1e999", "hidden_size"},
		{"hidden-float", "hidden_size", "64.5", "hidden_size"},
		{"hidden-string", "hidden_size", `"64"`, "hidden_size"},
		{"hidden-bool", "hidden_size", "true", "hidden_size"},
		{"layers-negative", "num_hidden_layers", "-1", "num_hidden_layers"},
		{"heads-zero", "num_attention_heads", "0", "num_attention_heads"},
		{"kv-heads-2p63", "num_key_value_heads", "9223372036854775807", "num_key_value_heads"},
		{"vocab-2p64", "vocab_size", "18446744073709551616", "vocab_size"},
		{"context-negative", "max_position_embeddings", "-2048", "max_position_embeddings"},
		{"rope-theta-inf", "rope_theta", "1e999", "rope_theta"},
		{"rope-theta-negative", "rope_theta", "-10000", "rope_theta"},
		{"rms-eps-inf", "rms_norm_eps", "1e999", "rms_norm_eps"},
		{"rms-eps-string", "rms_norm_eps", `"1e-5"`, "rms_norm_eps"},
		{"rope-scaling-type-unknown", "rope_scaling", `{"rope_type": "nope", "factor": 2.0}`, "rope_type"},
		{"rope-scaling-type-not-utf8", "rope_scaling", "{\"rope_type\": \"line\xffar\", \"factor\": 2.0}", "rope_type"},
		{"rope-scaling-factor-inf", "rope_scaling", `{"rope_type": "linear", "factor": 1e999}`, "factor"},
		{"rope-scaling-factor-negative", "rope_scaling", `{"rope_type": "linear", "factor": -2}`, "factor"},
		{"rope-scaling-not-object", "rope_scaling", `[1, 2]`, "rope_scaling"},
	} {
		cfg(f.name, configLlama(`"`+f.field+`": `+f.value), "ggufmodel.UnsupportedError", f.want)
	}
	cfg("hidden-missing", []byte(strings.Replace(string(configLlama("")), `"hidden_size": 64, `, "", 1)), "ggufmodel.MissingKeyError", "hidden_size")

	// tokenizer.json, as tcast convert -layout gguf reads it (ggufmodel.ReadTokenizer).
	tok := func(name, data string, want ...string) {
		cs = append(cs, badCase{path: "config/tokenizer-json/" + name, files: map[string][]byte{"tokenizer.json": []byte(data)},
			names: "tokenizer.json", want: want, check: "ggufmodel.UnsupportedError"})
	}
	tokValid := `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}, "pre_tokenizer": {"type": "ByteLevel"}, "added_tokens": []}`
	for n := 1; n < len(tokValid); n += 6 {
		tok(fmt.Sprintf("truncated/json-%03d", n), tokValid[:n])
	}
	tok("not-json", "vocab: a b c")
	tok("model-type-unknown", `{"model": {"type": "WordPiece", "vocab": {"a": 0}}}`, "model.type")
	tok("model-missing", `{"added_tokens": []}`, "model")
	tok("vocab-not-object", `{"model": {"type": "BPE", "vocab": [1, 2], "merges": []}}`, "vocab")
	tok("vocab-id-negative", `{"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}`, "vocab")
	tok("vocab-id-2p63", `{"model": {"type": "BPE", "vocab": {"a": 9223372036854775808}, "merges": []}}`, "vocab")
	tok("vocab-id-huge", `{"model": {"type": "BPE", "vocab": {"a": 2000000000}, "merges": []}}`, "vocab")
	tok("vocab-id-duplicate", `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}}`, "vocab")
	tok("vocab-id-inf", `{"model": {"type": "BPE", "vocab": {"a": 1e999}, "merges": []}}`, "vocab")
	tok("merges-not-list", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": "a b"}}`, "merges")
	tok("merges-bad-item", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [1]}}`, "merges")
	tok("added-token-id-negative", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}, "added_tokens": [{"id": -5, "content": "<s>"}]}`, "added_tokens")
	tok("unigram-score-inf", `{"model": {"type": "Unigram", "vocab": [["a", 1e999]]}}`, "vocab")
	tok("unigram-vocab-bad", `{"model": {"type": "Unigram", "vocab": [["a"]]}}`, "vocab")

	// tokenizer_config.json beside a valid tokenizer.json.
	tokCfg := func(name, data string, want ...string) {
		cs = append(cs, badCase{path: "config/tokenizer-config-json/" + name, files: map[string][]byte{
			"tokenizer.json": []byte(tokValid), "tokenizer_config.json": []byte(data)},
			names: "tokenizer_config.json", want: want, check: "ggufmodel.UnsupportedError"})
	}
	tokCfgValid := `{"bos_token": "a", "eos_token": "b", "add_bos_token": true, "chat_template": "{{ x }}"}`
	for n := 1; n < len(tokCfgValid); n += 5 {
		tokCfg(fmt.Sprintf("truncated/json-%03d", n), tokCfgValid[:n])
	}
	tokCfg("not-json", "bos_token = a")
	tokCfg("array", `["a"]`)
	tokCfg("add-bos-string", `{"add_bos_token": "yes"}`)
	tokCfg("add-eos-number", `{"add_eos_token": 1}`)
	tokCfg("bos-unknown-token", `{"bos_token": "<not-in-vocab>"}`, "bos_token")
	tokCfg("bos-number", `{"bos_token": 7}`, "bos_token")
	tokCfg("eos-object-no-content", `{"eos_token": {"id": 3}}`, "eos_token")
	tokCfg("chat-template-number", `{"eos_token": "b", "chat_template": 1e999}`, "chat_template")

	// info.json of a cast directory (castdir.Open, then its parts read).
	infoValid, err := os.ReadFile(filepath.Join("..", "..", "checkpoint", "castdir", "testdata", "golden", "nvfp4", "info.json"))
	if err != nil {
		panic(err)
	}
	parts := map[string][]byte{}
	for _, p := range []string{"packed.npy", "scale.npy", "tensor_scale.npy", "tensor_scale_codes.npy"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "checkpoint", "castdir", "testdata", "golden", "nvfp4", p))
		if err != nil {
			panic(err)
		}
		parts[p] = b
	}
	info := func(name string, data []byte, extra map[string][]byte, want ...string) {
		files := map[string][]byte{"info.json": data}
		for k, v := range parts {
			files[k] = v
		}
		for k, v := range extra {
			files[k] = v
		}
		cs = append(cs, badCase{path: "config/info-json/" + name, files: files, names: "info.json", want: want, check: "castdir.FormatError"})
	}
	repl := func(old, new string) []byte {
		s := string(infoValid)
		if !strings.Contains(s, old) {
			panic("info.json has no " + old)
		}
		return []byte(strings.Replace(s, old, new, 1))
	}
	for n := 1; n < len(infoValid); n += 97 {
		info(fmt.Sprintf("truncated/json-%04d", n), infoValid[:n], nil)
	}
	shape := "\"shape\": [\n    2,\n    48\n  ]"
	info("not-json", []byte("info"), nil)
	info("shape-negative", repl(shape, `"shape": [-2, 48]`), nil, "shape")
	info("shape-zero", repl(shape, `"shape": [0, 48]`), nil)
	info("shape-overflow", repl(shape, `"shape": [4294967296, 4294967296]`), nil, "shape")
	info("shape-2p63", repl(shape, `"shape": [9223372036854775808]`), nil, "shape")
	info("shape-inf", repl(shape, `"shape": [1e999]`), nil, "shape")
	info("axis-out-of-range", repl(`"axis": 1`, `"axis": 7`), nil, "axis")
	info("axis-negative", repl(`"axis": 1`, `"axis": -1`), nil, "axis")
	info("datatype-code-unknown", repl(`"code": "float4_e2m1fn_multi_ue4m3_float32_t16"`, `"code": "e99m99_t0"`), nil, "e99m99_t0")
	info("datatype-code-not-utf8", repl(`"code": "float4_e2m1fn_multi_ue4m3_float32_t16"`, "\"code\": \"e2m1\xff\""), nil, "datatype")
	info("datatype-code-missing", repl(`"code": "float4_e2m1fn_multi_ue4m3_float32_t16"`, `"code": ""`), nil, "datatype")
	info("form-actual", repl(`"form": "compressed"`, `"form": "actual"`), nil, "form")
	info("scale-mode-unknown", repl(`"scale_mode": "floor"`, `"scale_mode": "sideways"`), nil, "sideways")
	info("bits-per-value-inf", repl(`"bits_per_value": 4.833333333333333`, `"bits_per_value": 1e999`), nil, "bits_per_value")
	info("part-unknown", repl(`"name": "scale"`, `"name": "scales"`), nil, "scales")
	info("part-twice", repl(`"name": "scale"`, `"name": "data"`), nil, "data")
	info("part-file-escapes", repl(`"file": "scale.npy"`, `"file": "../../../etc/passwd"`), nil, `part "scale"`)
	info("part-shape-wrong", repl("\"shape\": [\n        2,\n        3\n      ]", `"shape": [2, 4]`), nil, "scale")
	info("part-bytes-wrong", repl(`"bytes": 6`, `"bytes": 9223372036854775807`), nil, "scale")
	// A part file at fault is named itself.
	partCase := func(name string, data []byte, want ...string) {
		files := map[string][]byte{"info.json": infoValid}
		for k, v := range parts {
			files[k] = v
		}
		files["scale.npy"] = data
		cs = append(cs, badCase{path: "config/info-json/" + name, files: files, names: "scale.npy", want: want, check: "castdir.FormatError"})
	}
	partCase("part-file-truncated", parts["scale.npy"][:len(parts["scale.npy"])-3], "offset")
	partCase("part-file-not-npy", []byte("PK\x03\x04 not an array"), "offset")
	missing := map[string][]byte{"info.json": infoValid}
	for k, v := range parts {
		if k != "scale.npy" {
			missing[k] = v
		}
	}
	cs = append(cs, badCase{path: "config/info-json/part-file-missing", files: missing, names: "scale.npy", check: "fs.PathError"})

	// tcast's own __metadata__ in a safetensors file (checkpoint/load.Open).
	meta := func(name, metadata string, want ...string) {
		h := `{"__metadata__":` + metadata + `,"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}`
		cs = append(cs, badCase{path: "config/tcast-metadata/" + name, files: map[string][]byte{"model.safetensors": stFile(h, make([]byte, 16))},
			names: "model.safetensors", want: want, check: "load"})
	}
	meta("format-version-3", `{"tcast.format":"3","tcast.layout":"tcast","tcast.weights":"{}"}`, "tcast.format")
	meta("format-version-nan", `{"tcast.format":"NaN","tcast.layout":"tcast","tcast.weights":"{}"}`, "tcast.format")
	meta("format-version-inf", `{"tcast.format":"Inf","tcast.layout":"tcast","tcast.weights":"{}"}`, "tcast.format")
	meta("format-version-huge", `{"tcast.format":"99999999999999999999","tcast.layout":"tcast","tcast.weights":"{}"}`, "tcast.format")
	meta("format-version-not-utf8", "{\"tcast.format\":\"1\xff\",\"tcast.layout\":\"tcast\",\"tcast.weights\":\"{}\"}", "UTF-8")
	meta("layout-unknown", `{"tcast.format":"1","tcast.layout":"tcast2","tcast.weights":"{}"}`, "tcast2")
	meta("weights-not-json", `{"tcast.format":"1","tcast.layout":"tcast","tcast.weights":"{w:"}`, "tcast.weights")
	meta("weights-array", `{"tcast.format":"1","tcast.layout":"tcast","tcast.weights":"[1]"}`, "tcast.weights")
	// A weight of a real tcast-layout checkpoint whose description lies.
	const w = "model.layers.0.mlp.down_proj.weight"
	weight := func(name string, mutate func(meta map[string]string), want ...string) {
		cs = append(cs, badCase{path: "config/tcast-weight/" + name, files: map[string][]byte{"model.safetensors": tcastModel(mutate)},
			names: "model.safetensors", want: want, check: "load"})
	}
	winfo := func(old, new string) func(map[string]string) {
		return func(m map[string]string) {
			k := "tcast.weight." + w
			if !strings.Contains(m[k], old) {
				panic("weight info has no " + old)
			}
			m[k] = strings.Replace(m[k], old, new, 1)
		}
	}
	weight("info-not-json", winfo(`{"datatype"`, `{datatype`), "layout tcast", "tcast.weight", "down_proj")
	weight("datatype-unknown", winfo(`"datatype":"float4_e2m1fn_float8_e8m0fnu_t32"`, `"datatype":"e99m99_t32"`), "e99m99", "down_proj")
	weight("datatype-not-utf8", winfo(`"datatype":"float4_e2m1fn_float8_e8m0fnu_t32"`, "\"datatype\":\"e2m1\xff\""), "UTF-8")
	weight("shape-overflow", winfo(`"shape":[32,128],"axis"`, `"shape":[4294967296,4294967296],"axis"`), "shape", "down_proj")
	weight("shape-negative", winfo(`"shape":[32,128],"axis"`, `"shape":[-32,128],"axis"`), "shape", "down_proj")
	weight("shape-larger", winfo(`"shape":[32,128],"axis"`, `"shape":[64,128],"axis"`), "shape", "down_proj")
	weight("shape-inf", winfo(`"shape":[32,128],"axis"`, `"shape":[1e999,128],"axis"`), "shape", "down_proj")
	weight("axis-out-of-range", winfo(`"axis":1`, `"axis":7`), "axis", "down_proj")
	weight("scale-mode-unknown", winfo(`"scale_mode":"floor"`, `"scale_mode":"sideways"`), "sideways", "down_proj")
	weight("data-bits-99", winfo(`"bits":4`, `"bits":99`), "bits", "down_proj")
	weight("data-shape-wrong", winfo(`"bits":4,"shape":[32,128]`, `"bits":4,"shape":[32,64]`), "data", "down_proj")
	weight("data-tensor-missing", winfo(`"tensor":"`+w+`"`, `"tensor":"nope"`), "nope", "down_proj")
	weight("scale-shape-wrong", winfo(`"shape":[32,4]`, `"shape":[1]`), "scale", "down_proj")
	weight("scale-format-unknown", winfo(`"format":"float8_e8m0fnu"`, `"format":"float8_e9m0"`), "scale", "down_proj")
	weight("weights-names-missing-tensor", func(m map[string]string) {
		m["tcast.weights"] = strings.Replace(m["tcast.weights"], `"`+w+`.scale"`, `"`+w+`.scales"`, 1)
	}, "scales", "down_proj")
	weight("rotated-not-json", func(m map[string]string) { m["tcast.rotated"] = "{" }, "tcast.rotated")
	weight("rotated-block-3", func(m map[string]string) {
		m["tcast.rotated"] = `{"` + w + `":{"kind":"hadamard","block":3}}`
	}, "tcast.rotated", "down_proj")
	// The loader layouts' test checkpoints with one stored tensor's dtype
	// or shape changed (its byte size kept, so the safetensors file stays
	// valid), or one __metadata__ value changed.
	lay := func(layoutDir, name string, mutate func(h map[string]*stEntry, meta map[string]string), want ...string) {
		cs = append(cs, badCase{path: "config/layout-tensors/" + layoutDir + "-" + name,
			files: map[string][]byte{"model.safetensors": stMutate(layoutDir, mutate)},
			names: "model.safetensors", want: append([]string{"down_proj"}, want...), check: "load"})
	}
	set := func(tensor, dtype string, shape ...int) func(map[string]*stEntry, map[string]string) {
		return func(h map[string]*stEntry, _ map[string]string) {
			e := h[tensor]
			if e == nil {
				panic("no tensor " + tensor)
			}
			if dtype != "" {
				e.DType = dtype
			}
			if shape != nil {
				e.Shape = shape
			}
		}
	}
	const ct, down = "compressed-tensors", "model.layers.0.mlp.down_proj."
	lay(ct, "scale-transposed", set(down+"weight_scale", "", 8, 32))
	lay(ct, "scale-dtype-u8", set(down+"weight_scale", "U8"))
	lay(ct, "packed-transposed", set(down+"weight_packed", "", 64, 32))
	lay(ct, "packed-dtype-i8", set(down+"weight_packed", "I8"))
	lay(ct, "packed-rank-3", set(down+"weight_packed", "", 32, 8, 8))
	lay(ct, "global-scale-dtype-i32", set(down+"weight_global_scale", "I32"))
	lay(ct, "global-scale-meta-nan", func(_ map[string]*stEntry, m map[string]string) {
		m["tcast.ct.global_scale.model.layers.0.mlp.down_proj"] = "NaN"
	})
	lay(ct, "datatype-meta-unknown", func(_ map[string]*stEntry, m map[string]string) {
		m["tcast.ct.datatype.model.layers.0.mlp.down_proj"] = "nvfp5"
	}, "nvfp5")
	const gp = "gpt-oss"
	lay(gp, "blocks-transposed", set("model.layers.0.mlp.down_proj_blocks", "", 32, 16, 4))
	lay(gp, "blocks-rank-2", set("model.layers.0.mlp.down_proj_blocks", "", 32, 64))
	lay(gp, "scales-transposed", set("model.layers.0.mlp.down_proj_scales", "", 4, 32))
	lay(gp, "scales-dtype-i8", set("model.layers.0.mlp.down_proj_scales", "I8"))
	lay(gp, "blocks-dtype-f8", set("model.layers.0.mlp.down_proj_blocks", "F8_E4M3"))
	const mo = "modelopt"
	lay(mo, "scale-reshaped", set(down+"weight_scale", "", 16, 16))
	lay(mo, "scale-dtype-u8", set(down+"weight_scale", "U8"))
	lay(mo, "weight-dtype-i8", set(down+"weight", "I8"))
	lay(mo, "weight-transposed", set(down+"weight", "", 64, 32))
	lay(mo, "scale2-dtype-i32", set(down+"weight_scale_2", "I32"))
	const fb = "fp8-block"
	lay(fb, "weight-dtype-u8", set(down+"weight", "U8"))
	lay(fb, "weight-dtype-e5m2", set(down+"weight", "F8_E5M2"))
	lay(fb, "scale-inv-dtype-i32", set(down+"weight_scale_inv", "I32"))
	lay(fb, "scale-inv-rank-1", set(down+"weight_scale_inv", "", 1))
	meta("transposed-not-list", `{"tcast.format":"1","tcast.layout":"tcast","tcast.weights":"{}","tcast.transposed":"{}"}`, "tcast.transposed")
	return cs
}

// tcastModel returns checkpoint/load's tcast-layout test checkpoint (see
// fixtureModel) with its __metadata__ changed by mutate.
func tcastModel(mutate func(meta map[string]string)) []byte {
	return fixtureModel("tcast", func(_ map[string]*stEntry, meta map[string]string) { mutate(meta) })
}

// stEntry is a tensor entry of a safetensors header.
type stEntry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// stMutate returns checkpoint/load's test checkpoint of a layout (see
// fixtureModel) with its tensor entries and __metadata__ changed by mutate.
func stMutate(layoutDir string, mutate func(h map[string]*stEntry, meta map[string]string)) []byte {
	return fixtureModel(layoutDir, mutate)
}

// fixtureModel reads checkpoint/load's test checkpoint of a layout, keeps
// only the down_proj weight (its stored tensors, their bytes, its
// metadata), so the case stays small, and lets mutate change the tensor
// entries and __metadata__. Metadata values are written as they are, even
// bytes that are not UTF-8.
func fixtureModel(layoutDir string, mutate func(h map[string]*stEntry, meta map[string]string)) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "checkpoint", "load", "testdata", layoutDir, "model.safetensors"))
	if err != nil {
		panic(err)
	}
	n := binary.LittleEndian.Uint64(b)
	data := b[8+n:]
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		panic(err)
	}
	var meta map[string]string
	h := map[string]*stEntry{}
	for k, v := range raw {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &meta); err != nil {
				panic(err)
			}
			continue
		}
		if !strings.Contains(k, "down_proj") {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(v, &e); err != nil {
			panic(err)
		}
		h[k] = &e
	}
	// The kept tensors' bytes, packed in their order in the file.
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return h[names[i]].Offsets[0] < h[names[j]].Offsets[0] })
	var kept []byte
	for _, k := range names {
		e := h[k]
		start := len(kept)
		kept = append(kept, data[e.Offsets[0]:e.Offsets[1]]...)
		e.Offsets = [2]int{start, len(kept)}
	}
	for k, v := range meta {
		switch {
		case strings.Contains(k, "up_proj"):
			delete(meta, k)
		case k == "tcast.weights":
			var ws map[string][]string
			if err := json.Unmarshal([]byte(v), &ws); err != nil {
				panic(err)
			}
			for w := range ws {
				if !strings.Contains(w, "down_proj") {
					delete(ws, w)
				}
			}
			js, _ := json.Marshal(ws)
			meta[k] = string(js)
		}
	}
	mutate(h, meta)
	var hb strings.Builder
	hb.WriteString(`{"__metadata__":{`)
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			hb.WriteString(",")
		}
		hb.WriteString(jsonString(k) + ":" + jsonString(meta[k]))
	}
	hb.WriteString("}")
	names = names[:0]
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		js, err := json.Marshal(h[k])
		if err != nil {
			panic(err)
		}
		hb.WriteString("," + jsonString(k) + ":" + string(js))
	}
	hb.WriteString("}")
	hdr := hb.String()
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	return stFile(hdr, kept)
}

// jsonString quotes s for JSON, keeping bytes that are not UTF-8 as they are.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ---------------------------------------------------------------- grammars

// grammarStrings are the hostile strings of each grammar, written to
// testdata/bad/grammar/<name>.txt one Go-quoted string a line.
var grammarStrings = map[string][]string{
	// dtype.Parse: number-format names.
	"dtype": {"", " ", "e", "e0m0", "e1m0", "e99m99", "e4m", "m3", "e4m3fnuzz", "e4m3b", "e4m3b999999999999999999999",
		"e4m3b-1", "e4m3fn_", "int", "int0", "int1", "int65", "int99999999999999999999", "uint-1", "uint0", "intK",
		"binary8p0", "binary8p9", "binary8p99999999999", "float8", "float8_e4m3fnx", "float99_e4m3fn",
		"\xff\xfe", "e4m3\x00", "e\u0662m3", "e" + strings.Repeat("9", 1000) + "m3", strings.Repeat("e4m3", 200),
		"NaN", "Inf", "-e4m3", "e-4m3", "e4m-3", "e4m3 fn"},
	// tcast.Lookup: datatype names and codes.
	"datatype": {"", "mxfp4e3", "mxfp", "nvfp5", "e2m1_", "_e8m0_t32", "_", "__", "e2m1_e8m0_t1025",
		"e2m1_e8m0_t99999999999999999999", "e2m1_e8m0_t32_t32_t32", "e2m1_e8m0_t32s0", "e2m1_e8m0_t32n5m4",
		"e2m1_bogus_t32", "bogus_e8m0_t32", "\xff", "mxfp4e2\x00", "mxfp4e2\n", strings.Repeat("a", 300),
		strings.Repeat("e2m1_", 100) + "e8m0_t32", "NaN", "e2m1_e8m0_tNaN", "e2m1_e8m0_t-32"},
	// scale.Parse: scale specs.
	"scale": {"", "_", "t32", "e8m0_", "e8m0_t1025", "e8m0_t99999999999", "e8m0_t-1",
		"e8m0_t32s0", "e8m0_t32s64", "e8m0_t32s7", "e8m0_t32n5m4", "e8m0_t32n0m0", "e8m0_t32n4m0", "e8m0_t32o99999",
		"e8m0_t32_t32_t32", "e8m0_t0_t0", "e8m0__t32", "bogus_t32", "e8m0_float16_int8_float32_t32", "\xff_t32", "e8m0_t32\x00",
		"e8m0_t" + strings.Repeat("3", 100), strings.Repeat("e8m0_", 100) + "t32", "e8m0_tNaN", "e8m0_t32x", "multi_t32"},
	// sparsity.ParsePattern: N:M patterns.
	"sparsity": {"", ":", "0:4", "5:4", "2:0", "0:0", "-1:4", "2:-4", "2:4:8", "n3m6x", "n:m", "99999999999999999999:4",
		"2:99999999999999999999", "\xff:4", "2:4\x00", "2 : 4", "NaN:4", "2:Inf", "2.5:4", "2:4.0", "n0m4", "n5m4",
		strings.Repeat("2", 500) + ":4"},
	// layout.Get: output layout (format) names.
	"format": {"", "tcastt", "gguff", "compressed_tensors", "\xff", "tcast\x00", "tcast\n", " tcast",
		strings.Repeat("gguf", 300), "../tcast", "NaN"},
	// rotate.Parse: rotation specs.
	"rotate": {"hadamard:", "hadamard:0", "hadamard:1", "hadamard:3", "hadamard:-2", "hadamard:99999999999999999999",
		"hadamard:1e3", "hadamard:2:2", "walsh", "hadamard:\xff", "hadamard:NaN", "hadamard:Inf", "hadamard:4294967296",
		"hadamard:" + strings.Repeat("9", 500)},
	// scale.ParseMode: scale-selection modes.
	"scale-mode": {"", "floors", "FLOOR ", "\xff", "floor\x00", "NaN", strings.Repeat("floor", 200)},
}

// grammarFiles returns the grammar files as corpus entries.
func grammarFiles() []badCase {
	var cs []badCase
	for name, ss := range grammarStrings {
		var b strings.Builder
		b.WriteString("# Hostile strings for the " + name + " grammar, one Go-quoted string a line (strconv.Unquote);\n")
		b.WriteString("# written by go test ./internal/badinput -run TestBadCorpus -update.\n")
		for _, s := range ss {
			b.WriteString(strconv.Quote(s))
			b.WriteByte('\n')
		}
		cs = append(cs, badCase{path: "grammar/" + name + ".txt", data: []byte(b.String())})
	}
	return cs
}

// ---------------------------------------------------------------- GGUF splits

// splitFile is one split of a model of count splits (split.no no) holding
// F32 tensors of 4 values named as given; total is split.tensors.count.
func splitFile(no, count, total int, tensors ...string) []byte {
	var w gguf.Writer
	if no == 0 {
		must(w.AddKV(gguf.KeyArchitecture, gguf.String("llama")))
	}
	must(w.AddKV(gguf.KeySplitNo, gguf.Uint16(uint16(no))))
	must(w.AddKV(gguf.KeySplitCount, gguf.Uint16(uint16(count))))
	must(w.AddKV(gguf.KeySplitTensors, gguf.Int32(int32(total))))
	for _, t := range tensors {
		must(w.AddTensor(t, gguf.TypeF32, []int{4}, make([]byte, 16)))
	}
	var b bytes.Buffer
	_, err := w.WriteTo(&b)
	must(err)
	return b.Bytes()
}

// must panics on an error of a case's construction.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// splitCases are split models (llama.cpp's gguf-split) whose splits do
// not add up; gguf.OpenModel is given the first split (or the file
// named model.gguf).
func splitCases() []badCase {
	const s1, s2 = "model-00001-of-00002.gguf", "model-00002-of-00002.gguf"
	var cs []badCase
	add := func(name string, files map[string][]byte, names string, want ...string) {
		cs = append(cs, badCase{path: "gguf-split/" + name, files: files, names: names, want: want})
	}
	first := splitFile(0, 2, 2, "a")
	add("split-missing", map[string][]byte{s1: first}, s2, "split 2 of 2")
	add("split-no-wrong", map[string][]byte{s1: first, s2: splitFile(0, 2, 2, "b")}, s2, "split.no", "want 2 of 2")
	add("split-count-wrong", map[string][]byte{s1: first, s2: splitFile(1, 3, 2, "b")}, s2, "2 of 3")
	add("tensor-in-two-splits", map[string][]byte{s1: first, s2: splitFile(1, 2, 2, "a")}, s2, `"a"`, "splits 1 and 2")
	add("tensors-count-wrong", map[string][]byte{s1: splitFile(0, 2, 5, "a"), s2: splitFile(1, 2, 5, "b")}, s1,
		"split.tensors.count", "hold 2")
	add("split-no-out-of-range", map[string][]byte{s1: splitFile(7, 2, 2, "a"), s2: splitFile(1, 2, 2, "b")}, s1, "split.no")
	add("not-named-as-split", map[string][]byte{"model.gguf": first}, "model.gguf", "NAME-00001-of-00002.gguf")
	add("split-truncated", map[string][]byte{s1: first, s2: splitFile(1, 2, 2, "b")[:40]}, s2, "offset")
	return cs
}
