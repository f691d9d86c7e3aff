package convert

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
)

// ggufLayout returns the gguf layout.
func ggufLayout(t *testing.T) layout.Layout {
	t.Helper()
	l, err := layout.Get("gguf")
	require.NoError(t, err)
	return l
}

// mixGGUFs writes the mix test model as F16 and Q4_K_M llama.cpp model
// files.
func mixGGUFs(t *testing.T) (f16, q4km string) {
	t.Helper()
	src := mixLlama(t, t.TempDir())
	f16, _, err := convertMix(t, src, "f16", Options{})
	require.NoError(t, err)
	q4km, _, err = convertMix(t, f16, "q4_k_m", Options{})
	require.NoError(t, err)
	return f16, q4km
}

// ggufBytes returns the stored bytes of every tensor of a GGUF file.
func ggufBytes(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	for _, ti := range f.Tensors {
		b, err := f.TensorBytes(ti.Name)
		require.NoError(t, err)
		out[ti.Name] = string(b)
	}
	return out
}

func TestRequantizeKeepsBlocks(t *testing.T) {
	// The same mix again, and COPY, copy every block as stored; the
	// input's file type stays with COPY.
	_, q4km := mixGGUFs(t)
	want := ggufBytes(t, q4km)
	for _, mix := range []string{"Q4_K_M", "COPY"} {
		out, res, err := convertMix(t, q4km, mix, Options{})
		require.NoError(t, err, mix)
		assert.Equal(t, want, ggufBytes(t, out), mix)
		assert.Zero(t, res.Cast(), mix)
		ft, _ := ggufKV(t, out, "general.file_type")
		assert.Equal(t, uint32(15), ft, mix)
	}
	// Another quantized type needs AllowRequantize.
	_, _, err := convertMix(t, q4km, "Q5_K_M", Options{})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.True(t, errors.Is(err, ErrRequantize))
	assert.Equal(t, "GGUF.AllowRequantize", oe.Option)
	assert.Contains(t, oe.Reason, "Q4_K in the input")
	out, res, err := convertMix(t, q4km, "Q5_K_M", Options{GGUF: GGUFOptions{AllowRequantize: true}})
	require.NoError(t, err)
	assert.Equal(t, gguf.TypeQ5_K, ggufTypes(t, out)["blk.1.attn_q.weight"])
	assert.Equal(t, want["blk.0.attn_v.weight"], ggufBytes(t, out)["blk.0.attn_v.weight"],
		"Q6_K in both mixes: copied")
	assert.NotZero(t, res.Cast())
}

func TestMixTypeOptions(t *testing.T) {
	f16, _ := mixGGUFs(t)
	q8, q6 := gguf.TypeQ8_0, gguf.TypeQ6_K
	out, _, err := convertMix(t, f16, "Q4_K_M", Options{GGUF: GGUFOptions{OutputType: &q8, TokenEmbeddingType: &q6}})
	require.NoError(t, err)
	types := ggufTypes(t, out)
	assert.Equal(t, gguf.TypeQ8_0, types["output.weight"])
	assert.Equal(t, gguf.TypeQ6_K, types["token_embd.weight"])
	out, _, err = convertMix(t, f16, "Q4_K_M", Options{GGUF: GGUFOptions{KeepOutput: true}})
	require.NoError(t, err)
	assert.Equal(t, gguf.TypeF16, ggufTypes(t, out)["output.weight"], "left as the input has it")

	// Without a mix these options are refused.
	l := ggufLayout(t)
	_, err = Convert(f16, filepath.Join(t.TempDir(), "x.gguf"), Options{Layout: l,
		DataType: mustDataType(t, l, "mxfp4"), GGUF: GGUFOptions{KeepOutput: true}})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "GGUF.KeepOutput", oe.Option)
	assert.ErrorIs(t, err, ErrMixOnly)
}

func TestPruneLayers(t *testing.T) {
	f16, _ := mixGGUFs(t)
	out, res, err := convertMix(t, f16, "Q4_K_M", Options{GGUF: GGUFOptions{PruneLayers: []int{1, 5}}})
	require.NoError(t, err)
	n, _ := ggufKV(t, out, "llama.block_count")
	assert.Equal(t, uint32(mixLayers-2), n)
	in, got := ggufBytes(t, f16), ggufTypes(t, out)
	// Blocks 0, 2, 3, 4, 6, 7 become 0 to 5; the F32 norms are copied.
	for newB, oldB := range []int{0, 2, 3, 4, 6, 7} {
		name := "blk." + strconv.Itoa(newB) + ".attn_norm.weight"
		assert.Equal(t, gguf.TypeF32, got[name])
		assert.Equal(t, in["blk."+strconv.Itoa(oldB)+".attn_norm.weight"], ggufBytes(t, out)[name], name)
	}
	assert.NotContains(t, got, "blk.6.attn_q.weight")
	dropped := 0
	for _, r := range res.Tensors {
		if r.Dropped {
			dropped++
			assert.Contains(t, r.Note, "pruned")
		}
	}
	assert.Equal(t, 2*9, dropped, "nine tensors a block")

	for _, bad := range [][]int{{mixLayers}, {0, 1, 2, 3, 4, 5, 6, 7}} {
		_, _, err := convertMix(t, f16, "Q4_K_M", Options{GGUF: GGUFOptions{PruneLayers: bad}})
		var oe *OptionError
		require.ErrorAs(t, err, &oe, "%v", bad)
		assert.Equal(t, "GGUF.PruneLayers", oe.Option)
	}
	src := mixLlama(t, t.TempDir())
	_, _, err = convertMix(t, src, "Q4_K_M", Options{GGUF: GGUFOptions{PruneLayers: []int{1}}})
	assert.ErrorIs(t, err, ErrGGUFInputOnly, "a checkpoint")
}

func TestKVOverride(t *testing.T) {
	f16, _ := mixGGUFs(t)
	name, err := gguf.ParseKV("general.name=str:renamed")
	require.NoError(t, err)
	extra, err := gguf.ParseKV("x.y=int:-3")
	require.NoError(t, err)
	out, _, err := convertMix(t, f16, "Q8_0", Options{GGUF: GGUFOptions{KV: []gguf.KV{name, extra}}})
	require.NoError(t, err)
	v, _ := ggufKV(t, out, "general.name")
	assert.Equal(t, "renamed", v)
	v, _ = ggufKV(t, out, "x.y")
	assert.Equal(t, uint32(3), v)
}

func TestDryRun(t *testing.T) {
	f16, _ := mixGGUFs(t)
	_, res, err := convertMix(t, f16, "Q4_K_M", Options{})
	require.NoError(t, err)
	out, dry, err := convertMix(t, f16, "Q4_K_M", Options{DryRun: true})
	require.NoError(t, err)
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
	assert.True(t, dry.DryRun)
	require.Len(t, dry.Tensors, len(res.Tensors))
	var sum int64
	for i, d := range dry.Tensors {
		r := res.Tensors[i]
		assert.Equal(t, r.BytesOut, d.BytesOut, d.Name)
		assert.Equal(t, r.DataType, d.DataType, d.Name)
		assert.Equal(t, r.Reason, d.Reason, d.Name)
		assert.Nil(t, d.SQNR, d.Name)
		sum += d.BytesOut
	}
	assert.Equal(t, sum, dry.BytesOut)

	// Without an output, and a mix that needs a matrix: a warning only.
	opts := Options{Layout: ggufLayout(t), DryRun: true}
	opts.GGUF.Mix = ggufmix.MixQ2_K_S
	dry, err = Convert(f16, "", opts)
	require.NoError(t, err)
	require.NotEmpty(t, dry.Warnings)
	assert.Equal(t, "Imatrix", dry.Warnings[0].Option)
	_, err = Convert(f16, filepath.Join(t.TempDir(), "x.gguf"), Options{Layout: opts.Layout,
		GGUF: GGUFOptions{Mix: ggufmix.MixQ2_K_S}})
	assert.ErrorIs(t, err, ErrImatrixRequired)
}

func TestSplitKeysEntriesAndKeptHead(t *testing.T) {
	f16, _ := mixGGUFs(t)
	l := ggufLayout(t)
	// One split of one (split.count 1) splits again: the input's split
	// keys are dropped, as llama-quantize drops them.
	one := filepath.Join(t.TempDir(), "one") + "/"
	_, err := Convert(f16, one, Options{Layout: l, GGUF: GGUFOptions{Mix: ggufmix.MixQ8_0}, ShardSize: 1 << 40})
	require.NoError(t, err)
	first := filepath.Join(one, "model-00001-of-00001.gguf")
	again := filepath.Join(t.TempDir(), "again") + "/"
	_, err = Convert(first, again, Options{Layout: l, GGUF: GGUFOptions{Mix: ggufmix.MixQ8_0}, ShardSize: 1 << 20})
	require.NoError(t, err)
	plain := filepath.Join(t.TempDir(), "plain.gguf")
	_, err = Convert(first, plain, Options{Layout: l, GGUF: GGUFOptions{Mix: ggufmix.MixCOPY}})
	require.NoError(t, err)
	_, has := ggufKV(t, plain, gguf.KeySplitCount)
	assert.False(t, has, "no stale split keys")

	// Q2_K_S needs an entry for each of its Q2_K tensors.
	imPath := filepath.Join(t.TempDir(), "im.gguf")
	require.NoError(t, imatrix.WriteFile(imPath, &imatrix.Stats{ChunkCount: 1, ChunkSize: 1,
		Entries: []imatrix.Stat{{Name: "blk.0.attn_q.weight", Sum2: make([]float32, mixHidden), Counts: []int64{1}}}},
		imatrix.FormatGGUF))
	im, err := imatrix.Read(imPath)
	require.NoError(t, err)
	_, _, err = convertMix(t, f16, "Q2_K_S", Options{Imatrix: im})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.ErrorIs(t, err, ErrImatrixRequired)
	assert.Contains(t, oe.Reason, "has no entry for tensor")

	// The head left as it is keeps a checkpoint's BF16.
	src := mixLlama(t, t.TempDir())
	out, _, err := convertMix(t, src, "Q4_K_M", Options{GGUF: GGUFOptions{KeepOutput: true}})
	require.NoError(t, err)
	assert.Equal(t, gguf.TypeBF16, ggufTypes(t, out)["output.weight"])
}
