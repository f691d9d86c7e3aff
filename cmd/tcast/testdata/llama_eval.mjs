// llama_eval.mjs loads a GGUF model with llama.cpp (the prebuilt CPU build
// that the npm package node-llama-cpp ships), evaluates a prompt and prints
// one JSON object on stdout:
//
//   {"tokens": [...], "detokenized": "...", "bos": B, "eos": E, "logits": [[...], ...],
//    "n_vocab": N, "architecture": "...", "log": [{"level": "...", "message": "..."}, ...]}
//
// tokens is the prompt as llama.cpp tokenizes it, with the BOS token first
// when the model asks for one; detokenized is the prompt's tokens (without
// BOS) turned back into text. logits[i] holds the raw logits of every
// vocabulary token after the first i+1 tokens. The log is everything
// llama.cpp logged while loading and evaluating, at every level; on a
// failure, "error" holds the exception instead of the results.
//
// Usage: node llama_eval.mjs MODEL.gguf [PROMPT]
// TCAST_LLAMA_JS names the node_modules directory node-llama-cpp is
// installed in (NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install
// --ignore-scripts --omit=optional node-llama-cpp@3.22.1
// @node-llama-cpp/linux-x64@3.22.1).
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modelPath, prompt = "The small model reads a line of text"] = process.argv.slice(2);
if (!modelPath) {
    console.error("usage: node llama_eval.mjs MODEL.gguf [PROMPT]");
    process.exit(2);
}
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
    logLevel: LlamaLogLevel.debug,
    logger: (level, message) => log.push({ level: String(level), message: String(message) }),
    maxThreads: 2,
});
let out;
try {
    const model = await llama.loadModel({ modelPath, gpuLayers: 0, useMmap: true });
    const context = await model.createContext({
        contextSize: 64,
        batchSize: 64,
        threads: 2,
        experimentalKvCacheKeyType: "F32",
        experimentalKvCacheValueType: "F32",
    });
    const seq = context.getSequence();
    const text = model.tokenize(prompt);
    const bos = model.tokens.bos;
    const tokens = bos != null && model.tokens.shouldPrependBosToken ? [bos, ...text] : text;
    const detokenized = model.detokenize(text);
    const input = tokens.map((t) => [t, { generateNext: { logits: true } }]);
    const res = await seq.controlledEvaluate(input);
    const nVocab = model.tokens.count ?? model.fileInfo?.metadata?.tokenizer?.ggml?.tokens?.length;
    const logits = res.map((r) => {
        const m = r?.next?.logits;
        const row = new Array(nVocab).fill(null);
        if (m) {
            for (const [tok, v] of m) row[tok] = v;
        }
        return row;
    });
    out = {
        tokens: Array.from(tokens),
        detokenized,
        bos,
        eos: model.tokens.eos,
        logits,
        n_vocab: nVocab,
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
