#!/usr/bin/env python3
"""Reference logits of a Hugging Face Llama checkpoint, for the llama.cpp runtime test.

Usage: python3 llama_ref.py MODEL_DIR OUT.json TOKENS

MODEL_DIR holds model.safetensors (F32, F16 or BF16) and config.json as tcast synth -arch llama
writes them; TOKENS is a comma-separated list of token ids. Writes OUT.json:

    {"tokens": [...], "vocab": V, "logits": [[...], ...]}

where logits[i] holds the logits of tokens 0..V-1 after the first i+1 tokens (V = min(64,
vocab size): enough to catch any wrong weight, small enough to commit).

The forward pass is written from the Hugging Face Llama definition with torch in float32,
independently of llama.cpp and of tensorcast-go: RMSNorm x·w/sqrt(mean(x²)+eps); rotary
embeddings on the un-permuted q/k projections with rotate_half (pairs (i, i+d/2)),
θ_i = rope_theta^(−2i/d); grouped-query attention (query head h reads key/value head
h // (heads/kv_heads)) with a causal mask and 1/sqrt(d) scaling; SwiGLU MLP
down(silu(gate(x))·up(x)); the final norm and lm_head (the embedding when tied). When
config.json's model_type is gemma, Gemma's definition: the embedding times sqrt(hidden_size),
RMSNorm by 1 + weight, GELU (tanh approximation) in the MLP, and the embedding as the head.

The golden file cmd/tcast/testdata/llama_ref.json is made for the synth checkpoint of
TestLlamaCppRuntime (its flags are in llamaRefSynth) and the tokens llama.cpp gives the
test's prompt, and llama_ref_gemma.json for the same files with config.json's model_type
set to gemma (.ci/run makes both):

    go run ./cmd/tcast synth -arch llama -o /tmp/ref/model.safetensors -layers 2 \\
        -hidden 256 -vocab 512 -dtype f32 -seed 13 -force
    /usr/bin/python3 cmd/tcast/testdata/llama_ref.py /tmp/ref cmd/tcast/testdata/llama_ref.json \\
        "$(python3 -c 'import json;print(",".join(map(str,json.load(open("cmd/tcast/testdata/llama_ref.json"))["tokens"])))')"
"""

import json
import struct
import sys

import numpy as np
import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        raw = data[a:b]
        if info["dtype"] == "F32":
            x = np.frombuffer(raw, dtype="<f4")
        elif info["dtype"] == "F16":
            x = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif info["dtype"] == "BF16":
            x = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{name}: dtype {info['dtype']} not supported")
        out[name] = torch.from_numpy(x.copy().reshape(info["shape"]))
    return out


def rms_norm(x, w, eps, gemma=False):
    if gemma:
        w = 1 + w  # Gemma's RMSNorm multiplies by 1 + weight
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(w, cfg, tokens, observe=None, linear=None):
    """Logits of every position. observe(name, x), when given, sees the input x ([tokens, cols]) of
    every matrix product of the layers, under the weight's GGUF name (blk.N.attn_q.weight, ...);
    linear(x, W), when given, computes x @ W.T (a faster kernel for long inputs)."""
    if observe is None:
        observe = lambda name, x: None
    if linear is None:
        linear = lambda x, W: x @ W.T
    H = cfg["hidden_size"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    d = cfg.get("head_dim", H // nh)
    eps = cfg["rms_norm_eps"]
    theta = cfg.get("rope_theta", 10000.0)
    gemma = cfg["model_type"] == "gemma"
    T = len(tokens)
    ids = torch.tensor(tokens)
    h = w["model.embed_tokens.weight"][ids]
    if gemma:
        h = h * torch.tensor(H ** 0.5)
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    ang = torch.arange(T, dtype=torch.float32)[:, None] * inv[None, :]
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    mask = torch.full((T, T), float("-inf")).triu(1)
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        x = rms_norm(h, w[p + "input_layernorm.weight"], eps, gemma)
        for t in ("attn_q", "attn_k", "attn_v"):
            observe(f"blk.{l}.{t}.weight", x)
        q = linear(x, w[p + "self_attn.q_proj.weight"]).view(T, nh, d)
        k = linear(x, w[p + "self_attn.k_proj.weight"]).view(T, nkv, d)
        v = linear(x, w[p + "self_attn.v_proj.weight"]).view(T, nkv, d)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = nh // nkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        s = torch.einsum("thd,shd->hts", q, k) / (d ** 0.5) + mask
        a = torch.softmax(s, dim=-1)
        o = torch.einsum("hts,shd->thd", a, v).reshape(T, nh * d)
        observe(f"blk.{l}.attn_output.weight", o)
        h = h + linear(o, w[p + "self_attn.o_proj.weight"])
        x = rms_norm(h, w[p + "post_attention_layernorm.weight"], eps, gemma)
        for t in ("ffn_gate", "ffn_up"):
            observe(f"blk.{l}.{t}.weight", x)
        g = linear(x, w[p + "mlp.gate_proj.weight"])
        u = linear(x, w[p + "mlp.up_proj.weight"])
        act = torch.nn.functional.gelu(g, approximate="tanh") if gemma else torch.nn.functional.silu(g)
        observe(f"blk.{l}.ffn_down.weight", act * u)
        h = h + linear(act * u, w[p + "mlp.down_proj.weight"])
    h = rms_norm(h, w["model.norm.weight"], eps, gemma)
    observe("output.weight", h)
    head = w["model.embed_tokens.weight"] if gemma else w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return linear(h, head)


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    model_dir, out, toks = sys.argv[1:]
    tokens = [int(t) for t in toks.split(",")]
    with open(f"{model_dir}/config.json") as f:
        cfg = json.load(f)
    w = read_safetensors(f"{model_dir}/model.safetensors")
    with torch.no_grad():
        logits = forward(w, cfg, tokens)
    v = min(64, logits.shape[1])
    res = {"tokens": tokens, "vocab": v,
           "logits": [[float(f"{x:.6g}") for x in row[:v].tolist()] for row in logits]}
    with open(out, "w") as f:
        json.dump(res, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
