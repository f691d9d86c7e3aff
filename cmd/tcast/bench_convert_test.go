package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// BenchmarkConvertSynth converts a tcast synth checkpoint (BF16, 10 layers of
// hidden size 2048 by default: 1.27 GB) to MXFP4 with the tcast binary, the
// input already in the page cache, and reports input GB/s and the converting
// process's peak RSS. TCAST_BENCH_LAYERS and TCAST_BENCH_HIDDEN change the size,
// TCAST_BENCH_INTERMEDIATE the MLP width (synth -intermediate: 5632 makes every
// row of a hidden-2048 model whole K-quant super-blocks);
// TCAST_BENCH_LAYOUT and TCAST_BENCH_DTYPE the output (e.g. gguf and q4_k_m);
// TCAST_BENCH_WORKERS the workers (0, all cores, by default);
// TCAST_BENCH_DIR keeps the files between runs.
//
//	go test -run '^$' -bench ConvertSynth -benchtime 3x ./cmd/tcast
func BenchmarkConvertSynth(b *testing.B) {
	dir := os.Getenv("TCAST_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	layers, hidden := envInt("TCAST_BENCH_LAYERS", 10), envInt("TCAST_BENCH_HIDDEN", 2048)
	bin := filepath.Join(dir, "tcast-bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	lay, dt := envString("TCAST_BENCH_LAYOUT", "tcast"), envString("TCAST_BENCH_DTYPE", "mxfp4")
	// GGUF output converts a complete Llama model (with its tokenizer), as
	// llama.cpp's users do.
	var arch []string
	suffix := ""
	if lay == "gguf" {
		arch, suffix = []string{"-arch", "llama"}, "-llama"
	}
	if inter := envInt("TCAST_BENCH_INTERMEDIATE", 0); inter > 0 {
		arch = append(arch, "-intermediate", strconv.Itoa(inter))
		suffix += "-i" + strconv.Itoa(inter)
	}
	in := filepath.Join(dir, "synth-"+strconv.Itoa(layers)+"x"+strconv.Itoa(hidden)+suffix, "model.safetensors")
	if _, err := os.Stat(in); err != nil {
		if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, append([]string{"synth", "-o", in, "-layers", strconv.Itoa(layers), "-hidden", strconv.Itoa(hidden)}, arch...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("synth: %v\n%s", err, out)
		}
	}
	st, err := os.Stat(in)
	if err != nil {
		b.Fatal(err)
	}
	// Read once, in small pieces, so the input is in the page cache but not in
	// this process's memory: the child starts sharing it (vfork), and its peak
	// RSS would otherwise count it.
	if f, err := os.Open(in); err != nil {
		b.Fatal(err)
	} else {
		_, err = io.Copy(io.Discard, f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(st.Size())
	out := filepath.Join(dir, "out")
	if lay == "gguf" {
		out += ".gguf"
	}
	workers := strconv.Itoa(envInt("TCAST_BENCH_WORKERS", 0))
	var peak int64
	for b.Loop() {
		cmd := exec.Command(bin, "convert", in, "-layout", lay, "-dtype", dt, "-workers", workers, "-o", out, "-force", "-json")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("convert: %v\n%s", err, out)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss) // KiB on Linux
		}
	}
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(st.Size())/(1<<20), "input-MiB")
}

func envString(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}
