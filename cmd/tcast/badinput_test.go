package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badCorpus is the corpus of hostile inputs (testdata/bad/README.md).
var badCorpus = filepath.Join("..", "..", "testdata", "bad")

// TestBadInputCLI runs a sample of the hostile-input corpus through tcast
// inspect, convert and cast as a child process: each must exit with status 1
// (an error in the input, not in the command line, and no panic, which exits
// with 2), within a deadline, with a message that names the file and says
// what to do next. internal/badinput runs the whole corpus through the
// library.
func TestBadInputCLI(t *testing.T) {
	out := t.TempDir()
	damaged := "download or export it again"
	for _, tc := range []struct {
		cmd  string // inspect, convert, cast, or act-norms (convert -act-norms FILE)
		path string // under testdata/bad
		file string // the base name the message names
		next string // what to do, said in the message
		not  string // a next step the message must not add ("" for none)
	}{
		{"inspect", "safetensors/hdrlen-2p63.safetensors", "", damaged, ""},
		{"inspect", "safetensors/offsets-overlap.safetensors", "", damaged, ""},
		{"inspect", "safetensors/name-not-utf8.safetensors", "", damaged, ""},
		{"inspect", "safetensors/shape-product-overflow.safetensors", "", damaged, ""},
		{"inspect", "safetensors/hdr-deep-nesting.safetensors", "", damaged, ""},
		{"inspect", "safetensors/truncated/cut-0100.safetensors", "", damaged, ""},
		{"inspect", "safetensors/truncated-header/json-050.safetensors", "", damaged, ""},
		{"convert", "safetensors/offsets-past-eof.safetensors", "", damaged, ""},
		{"convert", "safetensors/dtype-unknown.safetensors", "", damaged, ""},
		{"inspect", "index/shard-dotdot", "model.safetensors.index.json", damaged, ""},
		{"inspect", "index/truncated/json-040", "model.safetensors.index.json", damaged, ""},
		{"inspect", "index/total-size-inf", "model.safetensors.index.json", damaged, ""},
		{"convert", "index/name-not-utf8", "model.safetensors.index.json", damaged, ""},
		{"inspect", "gguf/string-len-2p63.gguf", "", damaged, ""},
		{"inspect", "gguf/tensor-count-2p63.gguf", "", damaged, ""},
		{"inspect", "gguf/tensor-overlap.gguf", "", damaged, ""},
		{"inspect", "gguf/key-not-utf8.gguf", "", damaged, ""},
		{"inspect", "gguf/truncated/cut-0135-in-kv2.value.bytes.gguf", "", damaged, ""},
		{"convert", "gguf/tensor-dims-product-overflow.gguf", "", damaged, ""},
		{"convert", "gguf/array-count-max-uint64.gguf", "", damaged, ""},
		{"cast", "npy/shape-2p63.npy", "", damaged, ""},
		{"cast", "npy/descr-object.npy", "", "save the array again with numpy.save, as a bool, integer or float array", damaged},
		{"cast", "npy/version-4-0.npy", "", "save the array again with numpy.save", damaged},
		{"cast", "npy/magic-bad.npy", "", "tcast cast takes one .npy array; if it is one, it is damaged: " + damaged, ""},
		{"inspect", "gguf/version-2.gguf", "", "convert the file with a current llama.cpp", damaged},
		{"inspect", "gguf/magic-bad.gguf", "", "if it is one, it is damaged: " + damaged, ""},
		{"convert", "safetensors/hdrlen-past-eof.safetensors", "", "the file is truncated: " + damaged, ""},
		{"inspect", "index/shard-is-gguf", "model-00001-of-00001.safetensors", "is a GGUF file, not the safetensors file", damaged},
		{"inspect", "index/weight-map-missing", "model.safetensors.index.json", "is a JSON file, not a checkpoint", damaged},
		{"cast", "npy/truncated/cut-100.npy", "", damaged, ""},
		{"act-norms", "npz/member-crc-wrong.npz", "", damaged, "numpy.savez writes"},
		{"act-norms", "npz/truncated/cut-099.npz", "", damaged, ""},
		{"act-norms", "npz/member-claims-4g-deflate.npz", "", "recreate it with numpy.savez", damaged},
		{"inspect", "index/shard-missing", "model.safetensors.index.json", "download every shard the index lists", damaged},
		{"verify", "index/shard-missing", "model-00002-of-00002.safetensors", "download every shard the index lists", damaged},
		{"convert", "index/shard-missing", "model-00002-of-00002.safetensors", "download every shard the index lists", damaged},
		{"decompress", "index/shard-missing", "model-00002-of-00002.safetensors", "download every shard the index lists", damaged},
		{"inspect", "index/shard-nul", `"x\x00.safetensors"`, "invalid file name", ""},
		{"act-norms", "npz/not-zip.npz", "not a zip archive (an .npz is one)", damaged, "zip: "},
		{"act-norms", "npz/npy-not-npz.npz", "is a NumPy .npy array, not an .npz archive; -act-norms takes an .npz", "numpy.savez", damaged},
		{"inspect", "config/tcast-metadata/format-version-3", "model.safetensors", "newer tcast", ""},
		{"inspect", "config/info-json/shape-overflow", "info.json", "tcast cast", ""},
		{"inspect", "config/info-json/part-file-truncated", "scale.npy", "tcast cast", ""},
	} {
		t.Run(tc.cmd+"/"+tc.path, func(t *testing.T) {
			p := filepath.Join(badCorpus, filepath.FromSlash(tc.path))
			_, err := os.Stat(p)
			require.NoError(t, err, "the corpus has no %s", tc.path)
			var args []string
			switch tc.cmd {
			case "inspect":
				args = []string{"inspect", p}
			case "convert":
				args = []string{"convert", p, "-dtype", "mxfp4", "-o", filepath.Join(out, "x.safetensors")}
			case "verify":
				args = []string{"verify", p, p}
			case "decompress":
				args = []string{"decompress", p, "-o", filepath.Join(out, "x.safetensors")}
			case "act-norms":
				args = []string{"convert", irisFixture, "-dtype", "mxfp4", "-sparsity", "2:4", "-sparsity-criterion", "wanda",
					"-act-norms", p, "-o", filepath.Join(out, "x.safetensors")}
			case "cast":
				args = []string{"cast", p, "-dtype", "mxfp4", "-o", filepath.Join(out, "cast")}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], args...)
			cmd.Env = append(os.Environ(), "TCAST_CHILD=run")
			stderr, err := cmd.CombinedOutput()
			msg := string(stderr)
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "tcast %s: %s", strings.Join(args, " "), msg)
			require.Equal(t, 1, ee.ExitCode(), msg)
			assert.NotContains(t, msg, "panic")
			assert.NotContains(t, msg, "goroutine ")
			file := tc.file
			if file == "" {
				file = filepath.Base(p)
			}
			assert.Contains(t, msg, file)
			assert.Contains(t, msg, tc.next)
			if tc.not != "" {
				assert.NotContains(t, msg, tc.not, "one next step")
			}
			assert.LessOrEqual(t, strings.Count(msg, " safetensors: "), 1, "one prefix: %s", msg)
			assert.Equal(t, 1, strings.Count(msg, "tcast "+args[0]+": "), "one message: %s", msg)
			assert.Equal(t, 1, strings.Count(msg, "\n"), "one line: %q", msg)
		})
	}
	_, err := os.Stat(filepath.Join(out, "x.safetensors"))
	assert.True(t, os.IsNotExist(err), "a refused conversion left an output")
}
