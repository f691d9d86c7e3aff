#!/usr/bin/env python3
"""An importance matrix for a Hugging Face Llama checkpoint: a stand-in for llama.cpp's llama-imatrix.

Usage: python3 llama_imatrix.py MODEL_DIR CALIBRATION.txt OUT.npz [--chunk-size N] [--chunks K]
                                [--process-output] [--check COMMITTED.npz]

MODEL_DIR holds model.safetensors (F32 or BF16), config.json and tokenizer.json as tcast synth -arch
llama writes them. The calibration text is tokenized with the checkpoint's own tokenizer.json (a
byte-level BPE: the pre-tokenizer's split, Python's re standing in for its \\p{L}/\\p{N} classes, then
merges applied lowest rank first, a piece found whole in the vocabulary taken as it is), then cut, as
llama-imatrix cuts it, into chunks of N tokens (default 512; at most K chunks, default all), the first
token of each replaced by the BOS token. Each chunk runs through the forward pass of llama_ref.py
(torch, float32, the Hugging Face Llama definition) on its own, and for every weight matrix of the
layers the input activations x ([tokens, cols]) are accumulated as llama-imatrix accumulates them:
in_sum2[c] += sum over tokens of x[t, c]^2 (here in float64, rounded to float32 at the end), and
counts += tokens. The output head is included only with --process-output (llama-imatrix's default
leaves it out; token_embd is a row lookup, never a matrix product).

OUT.npz holds, under GGUF names, what llama-imatrix stores (imatrix.ReadNPZ reads it, imatrix.Write
turns it into a GGUF or .dat imatrix):

    imatrix.datasets     uint8   the calibration file's base name followed by "\\n"
    imatrix.chunk_count  int64   chunks evaluated
    imatrix.chunk_size   int64   tokens per chunk
    W.in_sum2            float32 [cols]   for W = blk.N.attn_q.weight, ..., blk.N.ffn_down.weight
    W.counts             int64   [1]

--check COMMITTED.npz compares OUT.npz with a committed file: the same arrays, counts equal and
sums within a relative 1e-4 (another machine's torch may sum in another order).

The golden file cmd/tcast/testdata/llama_imatrix.npz is made for the synth checkpoint whose flags
are imatrixSynth in cmd/tcast/imatrix_test.go and testdata/calibration.txt (.ci/run makes it afresh
and checks it):

    go run ./cmd/tcast synth -arch llama -o /tmp/im/model.safetensors -layers 2 -hidden 768 \\
        -vocab 512 -dtype f32 -seed 13 -force
    /usr/bin/python3 cmd/tcast/testdata/llama_imatrix.py /tmp/im cmd/tcast/testdata/calibration.txt \\
        cmd/tcast/testdata/llama_imatrix.npz --chunk-size 128
"""

import argparse
import json
import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_ref  # noqa: E402  (the forward pass)


def byte_level():
    """GPT-2's byte-to-character table: printable Latin-1 bytes stand for themselves, the others for
    256, 257, ... in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, n = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table


# The Llama 3 pre-tokenizer split of the synth tokenizer.json, with Python's re classes: \p{L} is
# [^\W\d_] (a word character that is neither a digit nor "_"), \p{N} is \d.
LETTER = r"[^\W\d_]"
NOT_LN_CRLF = r"(?:[^\w\r\n]|_)"  # [^\r\n\p{L}\p{N}]
NOT_LN_SPACE = r"(?:[^\w\s]|_)"   # [^\s\p{L}\p{N}]
SPLIT = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|" + NOT_LN_CRLF + "?" + LETTER + r"+|\d{1,3}| ?" + NOT_LN_SPACE
    + r"+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


class Tokenizer:
    """Byte-level BPE encoding by a tokenizer.json of model type BPE."""

    def __init__(self, path):
        with open(path) as f:
            tj = json.load(f)
        model = tj["model"]
        if model["type"] != "BPE":
            raise SystemExit(f"{path}: model type {model['type']}, want BPE")
        self.vocab = model["vocab"]
        merges = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
        self.rank = {tuple(m): i for i, m in enumerate(merges)}
        self.ignore_merges = model.get("ignore_merges", False)
        self.bl = byte_level()
        self.bos = None
        for t in tj.get("added_tokens", []):
            if t["content"] in ("<|begin_of_text|>", "<s>"):
                self.bos = t["id"]
        if self.bos is None:
            raise SystemExit(f"{path}: no BOS token among the added tokens")

    def piece(self, text):
        syms = [self.bl[b] for b in text.encode("utf-8")]
        if self.ignore_merges and "".join(syms) in self.vocab:
            return [self.vocab["".join(syms)]]
        while len(syms) > 1:
            ranks = [(self.rank.get((syms[i], syms[i + 1]), None), i) for i in range(len(syms) - 1)]
            ranks = [r for r in ranks if r[0] is not None]
            if not ranks:
                break
            best = min(ranks)[0]
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and self.rank.get((syms[i], syms[i + 1])) == best:
                    out.append(syms[i] + syms[i + 1])
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            syms = out
        return [self.vocab[s] for s in syms]

    def encode(self, text):
        ids = []
        for m in SPLIT.finditer(text):
            ids.extend(self.piece(m.group(0)))
        return ids


def mkldnn_linear():
    """x @ W.T through oneDNN, with each weight converted once: tens of times faster than the
    generic BLAS some torch builds use (the sums move by float32 rounding only)."""
    cache = {}

    def linear(x, W):
        k = id(W)
        if k not in cache:
            cache[k] = W.contiguous().to_mkldnn()
        return torch._C._nn.mkldnn_linear(x.contiguous().to_mkldnn(), cache[k]).to_dense()
    return linear


def collect(model_dir, text_path, chunk_size, max_chunks, process_output):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    tok = Tokenizer(os.path.join(model_dir, "tokenizer.json"))
    with open(text_path, encoding="utf-8") as f:
        tokens = tok.encode(f.read())
    n_chunk = len(tokens) // chunk_size
    if max_chunks:
        n_chunk = min(n_chunk, max_chunks)
    if n_chunk < 1:
        raise SystemExit(f"{text_path}: {len(tokens)} tokens, fewer than one chunk of {chunk_size}")
    w = llama_ref.read_safetensors(os.path.join(model_dir, "model.safetensors"))
    linear = mkldnn_linear() if torch.backends.mkldnn.is_available() else None
    sums, counts = {}, {}

    def observe(name, x):
        if not name.startswith("blk.") and not (process_output and name == "output.weight"):
            return
        s = (x.double() * x.double()).sum(dim=0)
        if name in sums:
            sums[name] += s
        else:
            sums[name] = s
        counts[name] = counts.get(name, 0) + x.shape[0]

    with torch.no_grad():
        for c in range(n_chunk):
            chunk = tokens[c * chunk_size:(c + 1) * chunk_size]
            chunk[0] = tok.bos
            llama_ref.forward(w, cfg, chunk, observe, linear)
    return sums, counts, n_chunk, len(tokens)


def check(out, committed):
    a, b = np.load(out), np.load(committed)
    if sorted(a.files) != sorted(b.files):
        raise SystemExit(f"{out}: arrays {sorted(set(a.files) ^ set(b.files))} differ from {committed}")
    for k in a.files:
        x, y = a[k], b[k]
        if x.shape != y.shape or x.dtype != y.dtype:
            raise SystemExit(f"{k}: {x.dtype}{x.shape} vs committed {y.dtype}{y.shape}")
        if x.dtype.kind != "f":
            if not np.array_equal(x, y):
                raise SystemExit(f"{k}: {x} vs committed {y}")
            continue
        rel = np.abs(x.astype(np.float64) - y) / np.maximum(np.abs(y.astype(np.float64)), 1e-30)
        if rel.max() > 1e-4:
            raise SystemExit(f"{k}: relative difference {rel.max():.3g} from the committed file")
    print(f"{out}: matches {committed}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("calibration")
    ap.add_argument("out")
    ap.add_argument("--chunk-size", type=int, default=512)
    ap.add_argument("--chunks", type=int, default=0)
    ap.add_argument("--process-output", action="store_true")
    ap.add_argument("--check")
    ap.add_argument("--tokens-of", metavar="TEXT", help="print BOS and the tokens of TEXT as a comma-separated "
                    "list, and nothing else (to compare with llama.cpp's tokenization)")
    args = ap.parse_args()
    if args.tokens_of is not None:
        tok = Tokenizer(os.path.join(args.model_dir, "tokenizer.json"))
        print(",".join(map(str, [tok.bos] + tok.encode(args.tokens_of))))
        return
    sums, counts, n_chunk, n_tokens = collect(args.model_dir, args.calibration, args.chunk_size, args.chunks,
                                              args.process_output)
    arrays = {
        "imatrix.datasets": np.frombuffer((os.path.basename(args.calibration) + "\n").encode(), dtype=np.uint8),
        "imatrix.chunk_count": np.array(n_chunk, dtype=np.int64),
        "imatrix.chunk_size": np.array(args.chunk_size, dtype=np.int64),
    }
    for name in sorted(sums):
        arrays[name + ".in_sum2"] = sums[name].numpy().astype(np.float32)
        arrays[name + ".counts"] = np.array([counts[name]], dtype=np.int64)
    np.savez(args.out, **arrays)
    print(f"{args.out}: {len(sums)} entries, {n_chunk} chunks of {args.chunk_size} tokens "
          f"({n_tokens} tokens in {args.calibration})")
    if args.check:
        check(args.out, args.check)


if __name__ == "__main__":
    main()
