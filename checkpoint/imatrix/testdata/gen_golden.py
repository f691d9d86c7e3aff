#!/usr/bin/env python3
"""Writes the importance-matrix golden files the Go tests read.

golden.imatrix.gguf is written by ggml's own GGUF writer (libggml-base.so from
the node-llama-cpp 3.22.1 npm package, called through ctypes) exactly as
llama-imatrix saves a matrix: general.type, imatrix.datasets,
imatrix.chunk_count, imatrix.chunk_size, and per weight (sorted by name) the
F32 tensors <name>.in_sum2 [cols, matrices], <name>.counts [1, matrices] and
<name>.in_sum.

golden.imatrix.dat is the legacy format written from the same statistics:
int32 entry count; per entry int32 name length, name, int32 ncall (chunks,
rounded up, of the largest count), int32 nval, nval float32 values
(sum/count * ncall, or 1 * ncall for a matrix with count 0); then int32 chunk
count, int32 dataset name length, dataset name.

Run from checkpoint/imatrix with TCAST_GGML_LIB pointing at libggml-base.so:
    TCAST_GGML_LIB=.../libggml-base.so /usr/bin/python3 testdata/gen_golden.py
The statistics are small exact numbers; the Go test states the importance
each entry must give, derived by hand (mean square = sum / count).
"""
import ctypes
import math
import os
import struct
import sys

CHUNK_SIZE = 512
CHUNK_COUNT = 3
DATASETS = ["calib-a.txt", "calib-b.txt"]

# name -> (cols, counts per matrix, mean squares per matrix (the importance))
STATS = {
    "blk.0.attn_k.weight": (8, [1024], [[0.25, 0.5, 1, 2, 4, 8, 0, 1.5]]),
    "blk.0.ffn_down_exps.weight": (4, [1536, 0, 512],
                                   [[1, 2, 3, 4], [0, 0, 0, 0], [0.5, 0.25, 0.125, 0]]),
    "output.weight": (4, [1536], [[10, 20, 30, 40]]),
}
# plain activation sums (in_sum): any finite values; the Go reader checks and ignores them
def in_sum(name, cols, nmat):
    return [float(i % 5 - 2) for i in range(cols * nmat)]


def sums(name):
    cols, counts, means = STATS[name]
    return [c * m for c, row in zip(counts, means) for m in row]


def write_gguf(lib, path):
    class InitParams(ctypes.Structure):
        _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]

    lib.ggml_init.argtypes = [InitParams]
    lib.ggml_init.restype = ctypes.c_void_p
    lib.ggml_free.argtypes = [ctypes.c_void_p]
    lib.ggml_new_tensor_2d.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    lib.ggml_new_tensor_2d.restype = ctypes.c_void_p
    lib.ggml_set_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.ggml_set_name.restype = ctypes.c_void_p
    lib.ggml_get_data_f32.argtypes = [ctypes.c_void_p]
    lib.ggml_get_data_f32.restype = ctypes.POINTER(ctypes.c_float)
    lib.gguf_init_empty.restype = ctypes.c_void_p
    lib.gguf_free.argtypes = [ctypes.c_void_p]
    lib.gguf_set_val_str.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.gguf_set_arr_str.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
    lib.gguf_set_val_u32.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32]
    lib.gguf_add_tensor.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.gguf_write_to_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_bool]
    lib.gguf_write_to_file.restype = ctypes.c_bool

    GGML_TYPE_F32 = 0
    ctx = lib.ggml_init(InitParams(16 << 20, None, False))
    g = lib.gguf_init_empty()
    lib.gguf_set_val_str(g, b"general.type", b"imatrix")
    arr = (ctypes.c_char_p * len(DATASETS))(*[d.encode() for d in DATASETS])
    lib.gguf_set_arr_str(g, b"imatrix.datasets", arr, len(DATASETS))
    lib.gguf_set_val_u32(g, b"imatrix.chunk_count", CHUNK_COUNT)
    lib.gguf_set_val_u32(g, b"imatrix.chunk_size", CHUNK_SIZE)

    def tensor(name, ne0, ne1, values):
        t = lib.ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, ne1)
        lib.ggml_set_name(t, name.encode())
        data = lib.ggml_get_data_f32(t)
        for i, v in enumerate(values):
            data[i] = v
        lib.gguf_add_tensor(g, t)

    for name in sorted(STATS):
        cols, counts, _ = STATS[name]
        nmat = len(counts)
        tensor(name + ".in_sum2", cols, nmat, sums(name))
        tensor(name + ".counts", 1, nmat, [float(c) for c in counts])
        tensor(name + ".in_sum", cols, nmat, in_sum(name, cols, nmat))
    if not lib.gguf_write_to_file(g, path.encode(), False):
        sys.exit("gguf_write_to_file failed")
    lib.gguf_free(g)
    lib.ggml_free(ctx)


def write_dat(path):
    out = struct.pack("<i", len(STATS))
    for name in sorted(STATS):
        cols, counts, _ = STATS[name]
        s = sums(name)
        ncall = (max(counts) + CHUNK_SIZE - 1) // CHUNK_SIZE
        vals = []
        for i, v in enumerate(s):
            count = float(counts[i // cols])
            if count == 0:
                v, count = 1.0, 1.0
            vals.append(v / count * ncall)
        out += struct.pack("<i", len(name)) + name.encode()
        out += struct.pack("<ii", ncall, len(vals)) + struct.pack("<%df" % len(vals), *vals)
    out += struct.pack("<i", CHUNK_COUNT)
    out += struct.pack("<i", len(DATASETS[-1])) + DATASETS[-1].encode()
    with open(path, "wb") as f:
        f.write(out)


def main():
    lib_path = os.environ.get("TCAST_GGML_LIB")
    if not lib_path:
        sys.exit("set TCAST_GGML_LIB to node-llama-cpp's libggml-base.so")
    lib = ctypes.CDLL(lib_path)
    here = os.path.dirname(os.path.abspath(__file__))
    write_gguf(lib, os.path.join(here, "golden.imatrix.gguf"))
    write_dat(os.path.join(here, "golden.imatrix.dat"))
    for name in sorted(STATS):
        assert all(math.isfinite(v) for v in sums(name))
    print("wrote golden.imatrix.gguf and golden.imatrix.dat")


if __name__ == "__main__":
    main()
