package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

const decompressUsage = "tcast decompress -o OUT.npy [-to f32|f16|bf16] [-force] [-cpuprofile FILE] [-memprofile FILE] CASTDIR\n" +
	"       tcast decompress -o OUT.safetensors|OUTDIR [-to f32|f16|bf16] [-force] [-cpuprofile FILE] [-memprofile FILE] CHECKPOINT\n\n" +
	"With a checkpoint in any layout tcast reads (tcast convert's output in every layout, GGUF, and\n" +
	"compressed-tensors, gpt-oss, ModelOpt or fp8-block files written by other tools), writes a plain\n" +
	"safetensors checkpoint: quantized weights dequantized, other tensors as they are.\n" +
	"Rebuilds the values of a tensor from a directory written by tcast cast, using only its\n" +
	"info.json, packed.npy and part files (scale.npy, zero.npy, tensor_scale.npy, meta.npy,\n" +
	"mask.npy and the *_codes.npy of parts wider than 8 bits). With -to f32 the output equals\n" +
	"DIR/dequant.npy bit for bit. -to bf16 writes the bfloat16 bit patterns as a uint16 array\n" +
	"(NumPy has no bfloat16; view them with ml_dtypes: a.view(ml_dtypes.bfloat16))."

func runDecompress(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("decompress", flag.ContinueOnError)
	out := fs.String("o", "", "`OUT`: a .npy file for a cast directory, a .safetensors file or a directory for a checkpoint")
	to := fs.String("to", "f32", "output `TYPE`: f32 (float32), f16 (float16, fp16, half) or bf16 (bfloat16; bits as uint16 in .npy)")
	force := fs.Bool("force", false, "replace an existing output")
	prof := addProfileFlags(fs)
	pos, err := parseArgs(fs, decompressUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 1 && *out != "" {
		pr, err := prof.start(*force, *out, func() []string { return checkpointInputs(pos[0]) })
		if err != nil {
			return err
		}
		return pr.stop(decompress(pos, *out, *to, *force, stdout))
	}
	return decompress(pos, *out, *to, *force, stdout)
}

// decompress is the work of tcast decompress, after the flags.
// parseTo reads -to: f32, f16, bf16 or any name of those formats (fp16,
// half, float16, bfloat16, ...); nil is float32.
func parseTo(to string) (*dtype.Format, error) {
	short := map[string]string{"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
	name := to
	if n, ok := short[strings.ToLower(to)]; ok {
		name = n
	}
	f, err := dtype.Parse(name)
	switch {
	case err != nil || (f.Name() != "float32" && f.Name() != "float16" && f.Name() != "bfloat16"):
		return nil, usagef("-to %q: want f32, f16 or bf16 (or another name of float32, float16, bfloat16: fp16, half, ...)", to)
	case f.Name() == "float32":
		return nil, nil
	}
	return f, nil
}

func decompress(pos []string, out, to string, force bool, stdout io.Writer) error {
	switch {
	case len(pos) != 1:
		return usagef("want exactly one input (a cast directory or a checkpoint), got %d", len(pos))
	case out == "":
		return usagef("-o is required: OUT.npy for a cast directory, OUT.safetensors or a directory for a checkpoint")
	case strings.EqualFold(filepath.Ext(pos[0]), ".npy"):
		return usagef("%s is a NumPy array: cast it with tcast cast -o DIR, then decompress DIR", pos[0])
	}
	toFormat, err := parseTo(to)
	if err != nil {
		return err
	}
	dir := pos[0]
	if !castdir.Is(dir) && !(strings.EqualFold(filepath.Ext(out), ".npy") && !holdsCheckpoint(dir)) {
		// A checkpoint: back to plain safetensors.
		if strings.EqualFold(filepath.Ext(out), ".npy") {
			return usagef("-o %s: %s is a checkpoint, which decompresses to safetensors: give a .safetensors file or a directory", out, dir)
		}
		res, err := convert.Decompress(dir, out, convert.DecompressOptions{To: toFormat, Force: force})
		if err != nil {
			return explainConvert(err)
		}
		fmt.Fprintf(stdout, "%s (%s layout) → %s: %d tensors, %d dequantized to %s\n",
			res.Input, res.Layout, res.Output, res.Tensors, res.Dequantized, to)
		return nil
	}
	if !strings.EqualFold(filepath.Ext(out), ".npy") {
		return usagef("-o %s: %s is a cast directory, which decompresses to one .npy array: give OUT.npy", out, dir)
	}
	if err := checkCastDir(dir); err != nil {
		return err
	}
	d, err := castdir.Open(dir)
	if err != nil {
		return err
	}
	values, shape, err := d.Float32()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	outType := "float32"
	if toFormat == nil {
		err = npy.WriteSlice(&b, shape, values)
	} else {
		h := make([]uint16, len(values))
		dtype.EncodeSlice(toFormat, h, values, dtype.Options{Overflow: dtype.OverflowIEEE})
		if toFormat.Name() == "float16" {
			outType = "float16"
			err = npy.WriteFloat16(&b, shape, h)
		} else {
			outType = "bfloat16 bits as uint16"
			err = npy.WriteSlice(&b, shape, h)
		}
	}
	if err != nil {
		return err
	}
	if err := writeFile(out, b.Bytes(), force, dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d values %v of %s (%.4g bits per value) → %s (%s)\n",
		dir, len(values), shape, d.Name(), d.Info.BitsPerValue, out, outType)
	return nil
}

// writeFile publishes b at path atomically, refusing an existing path
// without force and a path that is, or is inside, one of inputs.
func writeFile(path string, b []byte, force bool, inputs ...string) error {
	if err := atomicfile.CheckOutput(path, inputs...); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	o, err := atomicfile.Begin(path, atomicfile.Options{Force: force})
	if err != nil {
		return err
	}
	defer o.Abort()
	if err := os.WriteFile(o.Path(), b, 0o666); err != nil {
		return err
	}
	return o.Commit()
}

// decompressTakes ends the message of an input decompress cannot read.
const decompressTakes = "decompress takes a cast directory (written by tcast cast) or a checkpoint"

// checkCastDir refuses an input to be read as a cast directory that does
// not exist or is a directory without info.json, saying what decompress
// takes, as inspect and convert say a checkpoint does not exist.
func checkCastDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("input %s does not exist: %w; %s", dir, err, decompressTakes)
	case err != nil:
		return err
	case st.IsDir() && !castdir.Is(dir):
		return fmt.Errorf("%s is not a cast directory (it has no %s) and holds no checkpoint; %s", dir, castdir.InfoFile, decompressTakes)
	}
	return nil
}

// holdsCheckpoint reports whether path is a file or a directory holding
// .safetensors or .gguf files: decompress reads it as a checkpoint, and
// anything else, with an .npy output, as a cast directory.
func holdsCheckpoint(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !st.IsDir() {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(path, "*.safetensors"))
	g, _ := filepath.Glob(filepath.Join(path, "*.gguf"))
	j, _ := filepath.Glob(filepath.Join(path, "*.safetensors.index.json"))
	return len(m)+len(g)+len(j) > 0
}
