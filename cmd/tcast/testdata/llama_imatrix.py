#!/usr/bin/env python3
"""An importance matrix of a Hugging Face Llama checkpoint, in llama.cpp's legacy .dat format.

Usage: python3 llama_imatrix.py MODEL_DIR OUT.dat [CHUNKS [TOKENS_PER_CHUNK [SEED]]]

MODEL_DIR holds model.safetensors (F32 or BF16), config.json and tokenizer.json as tcast synth
-arch llama writes them. The script runs the forward pass of llama_ref.py (torch, float32) on
CHUNKS chunks (default 8) of TOKENS_PER_CHUNK tokens (default 128) drawn uniformly at random
(numpy seed SEED, default 0) from the tokenizer's vocabulary, and records, for every weight
llama.cpp multiplies activations by, the mean square of the activations that met each of its
input columns, as llama-imatrix does: attn_q/attn_k/attn_v (the normed block input), attn_output
(the attention output), ffn_gate/ffn_up (the normed input of the MLP), ffn_down (silu(gate)·up),
output (the final normed state). The token embedding is looked up, not multiplied: no entry.

The .dat file: int32 entry count; per entry int32 name length, the GGUF tensor name
("blk.0.attn_q.weight"), int32 ncall (= CHUNKS), int32 value count and that many float32 values
(the mean squares times ncall, as llama-imatrix stores them); then int32 CHUNKS, int32 length and
the dataset name ("random-tokens"). tcast convert -imatrix OUT.dat reads it; so does
llama-quantize --imatrix.

Used for the README's GGUF figures (a synth model has no calibration text of its own); for a
real model, use llama.cpp's llama-imatrix on real text instead.
"""

import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_ref import read_safetensors, rms_norm, rotate_half  # noqa: E402


def collect(w, cfg, tokens, sums):
    """One chunk's forward pass, adding each weight's squared input columns to sums."""

    def add(name, x):
        s = (x.double() ** 2).sum(0)
        sums[name] = sums.get(name, 0) + s

    H = cfg["hidden_size"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    d = cfg.get("head_dim", H // nh)
    eps = cfg["rms_norm_eps"]
    theta = cfg.get("rope_theta", 10000.0)
    T = len(tokens)
    h = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    ang = torch.arange(T, dtype=torch.float32)[:, None] * inv[None, :]
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    mask = torch.full((T, T), float("-inf")).triu(1)
    for l in range(cfg["num_hidden_layers"]):
        p, b = f"model.layers.{l}.", f"blk.{l}."
        x = rms_norm(h, w[p + "input_layernorm.weight"], eps)
        for n in ("attn_q", "attn_k", "attn_v"):
            add(b + n + ".weight", x)
        q = (x @ w[p + "self_attn.q_proj.weight"].T).view(T, nh, d)
        k = (x @ w[p + "self_attn.k_proj.weight"].T).view(T, nkv, d)
        v = (x @ w[p + "self_attn.v_proj.weight"].T).view(T, nkv, d)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = nh // nkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        s = torch.einsum("thd,shd->hts", q, k) / (d ** 0.5) + mask
        o = torch.einsum("hts,shd->thd", torch.softmax(s, dim=-1), v).reshape(T, nh * d)
        add(b + "attn_output.weight", o)
        h = h + o @ w[p + "self_attn.o_proj.weight"].T
        x = rms_norm(h, w[p + "post_attention_layernorm.weight"], eps)
        add(b + "ffn_gate.weight", x)
        add(b + "ffn_up.weight", x)
        a = torch.nn.functional.silu(x @ w[p + "mlp.gate_proj.weight"].T) * (x @ w[p + "mlp.up_proj.weight"].T)
        add(b + "ffn_down.weight", a)
        h = h + a @ w[p + "mlp.down_proj.weight"].T
    h = rms_norm(h, w["model.norm.weight"], eps)
    if "lm_head.weight" in w:
        add("output.weight", h)


def main():
    if not 3 <= len(sys.argv) <= 6:
        raise SystemExit(__doc__)
    model_dir, out = sys.argv[1:3]
    chunks = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    per = int(sys.argv[4]) if len(sys.argv) > 4 else 128
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    with open(f"{model_dir}/config.json") as f:
        cfg = json.load(f)
    with open(f"{model_dir}/tokenizer.json") as f:
        ntok = len(json.load(f)["model"]["vocab"])
    w = read_safetensors(f"{model_dir}/model.safetensors")
    rng = np.random.default_rng(seed)
    sums = {}
    with torch.no_grad():
        for _ in range(chunks):
            collect(w, cfg, rng.integers(0, ntok, per).tolist(), sums)
    rows = chunks * per
    body = bytearray(struct.pack("<i", len(sums)))
    for name in sorted(sums):
        vals = (sums[name] / rows * chunks).float().numpy().astype("<f4")
        nb = name.encode()
        body += struct.pack("<i", len(nb)) + nb + struct.pack("<ii", chunks, len(vals)) + vals.tobytes()
    ds = b"random-tokens"
    body += struct.pack("<ii", chunks, len(ds)) + ds
    with open(out, "wb") as f:
        f.write(body)


if __name__ == "__main__":
    main()
