// llama_logits.mjs runs a GGUF model with llama.cpp (the prebuilt CPU build
// of the npm package node-llama-cpp) over a text, as llama-perplexity does,
// and writes the logits of every scored position to a file.
//
// The text is tokenized by the model, cut into chunks of CTX tokens (the
// last partial chunk is dropped), and the first token of each chunk is
// replaced by BOS. Each chunk is evaluated on an emptied sequence; the logits
// after each of the chunk's second half of tokens are scored (the first
// half gives the context, as llama-perplexity's KL-divergence mode does).
//
// OUT gets, little-endian: uint32 positions, uint32 vocabulary size, then
// the float32 logits of each position, position by position. On stdout it
// prints one JSON object: {"positions": P, "n_vocab": V, "chunks": C,
// "tokens": T, "architecture": "...", "log": [...]} (or {"error": ...}).
//
// Usage: node llama_logits.mjs MODEL.gguf TEXT.txt OUT.bin [CTX]
// TCAST_LLAMA_JS names the node_modules directory node-llama-cpp is
// installed in.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modelPath, textPath, outPath, ctxArg = "128"] = process.argv.slice(2);
if (!modelPath || !textPath || !outPath) {
    console.error("usage: node llama_logits.mjs MODEL.gguf TEXT.txt OUT.bin [CTX]");
    process.exit(2);
}
const ctx = Number(ctxArg);
const mods = process.env.TCAST_LLAMA_JS;
if (!mods) {
    console.error("TCAST_LLAMA_JS must name the node_modules directory holding node-llama-cpp");
    process.exit(2);
}
const nlc = await import(pathToFileURL(path.join(mods, "node-llama-cpp", "dist", "index.js")).href);
const { getLlama, LlamaLogLevel } = nlc;

const log = [];
const llama = await getLlama({
    gpu: false,
    build: "never",
    usePrebuiltBinaries: true,
    progressLogs: false,
    skipDownload: true,
    logLevel: LlamaLogLevel.warn,
    logger: (level, message) => log.push({ level: String(level), message: String(message) }),
    maxThreads: 2,
});
let out;
try {
    const model = await llama.loadModel({ modelPath, gpuLayers: 0, useMmap: true });
    const context = await model.createContext({
        contextSize: ctx,
        batchSize: ctx,
        threads: 2,
        experimentalKvCacheKeyType: "F32",
        experimentalKvCacheValueType: "F32",
    });
    const nVocab = model.tokens.count ?? model.fileInfo?.metadata?.tokenizer?.ggml?.tokens?.length;
    const tokens = model.tokenize(fs.readFileSync(textPath, "utf8"));
    const chunks = Math.floor(tokens.length / ctx);
    const half = Math.floor(ctx / 2);
    const positions = chunks * (ctx - half);
    const buf = Buffer.alloc(8 + positions * nVocab * 4);
    buf.writeUInt32LE(positions, 0);
    buf.writeUInt32LE(nVocab, 4);
    const f32 = new Float32Array(buf.buffer, buf.byteOffset + 8, positions * nVocab);
    let p = 0;
    const seq = context.getSequence();
    for (let c = 0; c < chunks; c++) {
        const chunk = tokens.slice(c * ctx, (c + 1) * ctx);
        chunk[0] = model.tokens.bos;
        await seq.clearHistory();
        const input = chunk.map((t, i) => [t, i >= half ? { generateNext: { logits: true } } : {}]);
        const res = await seq.controlledEvaluate(input);
        for (let i = half; i < ctx; i++) {
            const m = res[i]?.next?.logits;
            if (!m) throw new Error(`chunk ${c}, token ${i}: no logits`);
            const row = f32.subarray(p * nVocab, (p + 1) * nVocab);
            row.fill(NaN);
            for (const [tok, v] of m) row[tok] = v;
            p++;
        }
    }
    seq.dispose();
    fs.writeFileSync(outPath, buf);
    out = {
        positions,
        n_vocab: nVocab,
        chunks,
        tokens: tokens.length,
        architecture: model.fileInfo?.metadata?.general?.architecture,
    };
    await context.dispose();
    await model.dispose();
} catch (e) {
    out = { error: String(e?.stack ?? e) };
}
out.log = log;
await llama.dispose();
process.stdout.write(JSON.stringify(out) + "\n");
