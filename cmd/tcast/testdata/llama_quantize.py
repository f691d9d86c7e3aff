#!/usr/bin/env python3
"""Quantize GGUF files with llama.cpp's own llama_model_quantize (what llama-quantize calls).

Usage: python3 llama_quantize.py LIBLLAMA JOBS.json

LIBLLAMA is libllama.so of node-llama-cpp's prebuilt CPU build (as in .ci/run), called through
ctypes, so llama.cpp's code chooses the types. JOBS.json is a list of {"in", "out", "ftype"}
(ftype: llama.h's llama_ftype value); each job quantizes "in" to "out" with llama-quantize's
defaults otherwise (one thread). Prints a JSON list with each job's return code (0 for success).
llama.cpp's log goes to stderr.
"""

import ctypes
import json
import sys


class QuantizeParams(ctypes.Structure):
    """llama_model_quantize_params of the pinned include/llama.h, field for field."""
    _fields_ = [
        ("nthread", ctypes.c_int32),
        ("ftype", ctypes.c_int),
        ("output_tensor_type", ctypes.c_int),
        ("token_embedding_type", ctypes.c_int),
        ("allow_requantize", ctypes.c_bool),
        ("quantize_output_tensor", ctypes.c_bool),
        ("only_copy", ctypes.c_bool),
        ("pure", ctypes.c_bool),
        ("keep_split", ctypes.c_bool),
        ("dry_run", ctypes.c_bool),
        ("imatrix", ctypes.c_void_p),
        ("kv_overrides", ctypes.c_void_p),
        ("tt_overrides", ctypes.c_void_p),
        ("prune_layers", ctypes.c_void_p),
        ("max_buf_size", ctypes.c_size_t),
    ]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lib = ctypes.CDLL(sys.argv[1])
    lib.llama_model_quantize_default_params.restype = QuantizeParams
    lib.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(QuantizeParams)]
    lib.llama_model_quantize.restype = ctypes.c_uint32
    with open(sys.argv[2]) as f:
        jobs = json.load(f)
    codes = []
    for job in jobs:
        p = lib.llama_model_quantize_default_params()
        p.ftype = job["ftype"]
        p.nthread = 1
        codes.append(lib.llama_model_quantize(job["in"].encode(), job["out"].encode(), ctypes.byref(p)))
    print(json.dumps(codes))


if __name__ == "__main__":
    main()
