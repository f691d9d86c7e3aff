// gguf_list.mjs: list a local GGUF file with @huggingface/gguf, an
// independent reader used as a test oracle for checkpoint/gguf.
//
// Usage:
//   npm install --prefix DIR @huggingface/gguf@0.4.6
//   TCAST_GGUF_JS=DIR/node_modules node gguf_list.mjs FILE.gguf
//
// TCAST_GGUF_JS may name the node_modules directory or its parent (the
// --prefix directory); without it the package is resolved from this
// script's location. Prints one JSON object:
//   {"version", "tensor_count", "kv_count", "alignment", "data_offset",
//    "kv": [{"key", "type", "elem_type"?, "value"}],
//    "tensors": [{"name", "type", "dims", "offset"}]}
// dims are in ggml ne order (innermost first), as stored in the file.
// 64-bit integers are printed as decimal strings, floats as numbers
// (non-finite ones as the strings "NaN", "Infinity", "-Infinity").

import { createRequire } from "node:module";
import path from "node:path";

function loadGGUF() {
	const base = process.env.TCAST_GGUF_JS;
	const require = createRequire(base ? path.join(path.resolve(base), "resolve.js") : import.meta.url);
	return require("@huggingface/gguf");
}

function plain(v) {
	if (typeof v === "bigint") return v.toString();
	if (typeof v === "number" && !Number.isFinite(v)) return String(v);
	if (Array.isArray(v)) return v.map(plain);
	return v;
}

async function main() {
	const file = process.argv[2];
	if (!file) {
		console.error("usage: node gguf_list.mjs FILE.gguf");
		process.exit(2);
	}
	const { gguf } = loadGGUF();
	const res = await gguf(path.resolve(file), { allowLocalFile: true, typedMetadata: true });
	const skip = new Set(["version", "tensor_count", "kv_count"]);
	const kv = [];
	for (const [key, entry] of Object.entries(res.typedMetadata)) {
		if (skip.has(key)) continue;
		const item = { key, type: entry.type, value: plain(entry.value) };
		if (entry.subType !== undefined) item.elem_type = entry.subType;
		kv.push(item);
	}
	const out = {
		version: res.metadata.version,
		tensor_count: plain(res.metadata.tensor_count),
		kv_count: plain(res.metadata.kv_count),
		alignment: Number(res.metadata["general.alignment"] ?? 32),
		data_offset: plain(res.tensorDataOffset),
		kv,
		tensors: res.tensorInfos.map((t) => ({
			name: t.name,
			type: t.dtype,
			dims: t.shape.map(Number),
			offset: plain(t.offset),
		})),
	};
	process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
	console.error(err && err.stack ? err.stack : String(err));
	process.exit(1);
});
