#!/usr/bin/env python3
"""Quantize GGUF files with llama.cpp's own llama_model_quantize (what llama-quantize calls).

Usage: python3 llama_quantize.py LIBLLAMA JOBS.json

LIBLLAMA is libllama.so of node-llama-cpp's prebuilt CPU build (as in .ci/run), called through
ctypes, so llama.cpp's code chooses the types. JOBS.json is a list of jobs, each quantizing "in" to
"out" as "ftype" (llama.h's llama_ftype value) on "nthread" threads (default 1), with
llama-quantize's defaults but for the optional fields, which set llama_model_quantize_params as
llama-quantize's flags do:
  output_tensor_type, token_embedding_type   ggml_type values (--output-tensor-type, ...)
  leave_output, only_copy, pure, allow_requantize   booleans (--leave-output-tensor, COPY, ...)
  prune_layers       a list of block numbers (--prune-layers)
  kv_overrides       a list of {"key", "type" (int, float, bool, str), "value"} (--override-kv)
  tensor_types       a list of {"pattern", "type" (a ggml_type value)} (--tensor-type)
  imatrix            {"name": size}: an importance matrix of ones of that size per name (--imatrix)
Prints a JSON list with each job's return code (0 for success). llama.cpp's log goes to stderr.
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


class KVValue(ctypes.Union):
    _fields_ = [("val_i64", ctypes.c_int64), ("val_f64", ctypes.c_double),
                ("val_bool", ctypes.c_bool), ("val_str", ctypes.c_char * 128)]


class KVOverride(ctypes.Structure):
    """llama_model_kv_override: the tag (INT, FLOAT, BOOL, STR), the key and the value."""
    _anonymous_ = ("v",)
    _fields_ = [("tag", ctypes.c_int), ("key", ctypes.c_char * 128), ("v", KVValue)]


class TensorOverride(ctypes.Structure):
    """llama_model_tensor_override."""
    _fields_ = [("pattern", ctypes.c_char_p), ("type", ctypes.c_int)]


class ImatrixData(ctypes.Structure):
    """llama_model_imatrix_data."""
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.POINTER(ctypes.c_float)), ("size", ctypes.c_size_t)]


KV_TAGS = {"int": 0, "float": 1, "bool": 2, "str": 3}


def kv_overrides(items):
    arr = (KVOverride * (len(items) + 1))()
    for o, it in zip(arr, items):
        o.tag = KV_TAGS[it["type"]]
        o.key = it["key"].encode()
        if it["type"] == "int":
            o.val_i64 = int(it["value"])
        elif it["type"] == "float":
            o.val_f64 = float(it["value"])
        elif it["type"] == "bool":
            o.val_bool = it["value"] == "true"
        else:
            o.val_str = it["value"].encode()
    return arr  # the last entry's key is empty: the end


def apply(p, job, keep):
    """Sets the optional fields of job on p; keep holds what the pointers point to."""
    for name in ("output_tensor_type", "token_embedding_type"):
        if name in job:
            setattr(p, name, job[name])
    p.quantize_output_tensor = not job.get("leave_output", False)
    p.only_copy = job.get("only_copy", False)
    p.pure = job.get("pure", False)
    p.allow_requantize = job.get("allow_requantize", False)
    if job.get("prune_layers"):
        arr = (ctypes.c_int32 * (len(job["prune_layers"]) + 1))(*job["prune_layers"], -1)
        keep.append(arr)
        p.prune_layers = ctypes.cast(arr, ctypes.c_void_p)
    if job.get("kv_overrides"):
        arr = kv_overrides(job["kv_overrides"])
        keep.append(arr)
        p.kv_overrides = ctypes.cast(arr, ctypes.c_void_p)
    if job.get("tensor_types"):
        tts = job["tensor_types"]
        arr = (TensorOverride * (len(tts) + 1))()
        for o, t in zip(arr, tts):
            o.pattern, o.type = t["pattern"].encode(), t["type"]  # the last pattern is NULL: the end
        keep.append(arr)
        p.tt_overrides = ctypes.cast(arr, ctypes.c_void_p)
    if job.get("imatrix"):
        ims = sorted(job["imatrix"].items())
        arr = (ImatrixData * (len(ims) + 1))()
        for o, (name, size) in zip(arr, ims):
            data = (ctypes.c_float * size)(*([1.0] * size))
            keep.append(data)
            o.name, o.data, o.size = name.encode(), data, size
        keep.append(arr)
        p.imatrix = ctypes.cast(arr, ctypes.c_void_p)


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
        p.nthread = job.get("nthread", 1)
        keep = []
        apply(p, job, keep)
        codes.append(lib.llama_model_quantize(job["in"].encode(), job["out"].encode(), ctypes.byref(p)))
    print(json.dumps(codes))


if __name__ == "__main__":
    main()
