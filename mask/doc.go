// Package mask holds bit-packed N-D masks, a reference-counted shared mask
// buffer, and attention masks (padding, segment IDs, cumulative lengths, causal,
// sliding-window and chunked rules) with their conversions and a text picture.
//
// A [Mask] is a boolean array of any rank stored one bit per element, row-major,
// LSB first: element 8k+i is bit i of byte k, and a set bit means keep (true),
// as in torch.masked and everywhere in this module. Masks broadcast as NumPy
// arrays do (a [3,1,1] or a [5] mask against [3,4,5]), combine with And, Or,
// Xor, AndNot and Not, reduce with Any, All, Count and FirstSet, and act on
// float32 slices: Select (torch.where), Compact and Expand (the kept values
// packed to the front and scattered back) and Apply (zeroing what is not
// kept). The bulk loops (packing, popcount, selection) are the kernels of
// package kernels, with their SIMD tiers.
//
// A [Buffer] shares one mask between several users: the first Materialize
// stores it, later ones check that they bring the same mask, and the last
// Release frees it.
//
// # Bytes and files
//
// A mask converts to and from []bool ([FromBools], [Mask.Bools]), one byte of
// 0 or 1 per element — the payload of a NumPy bool or uint8 array —
// ([FromFlags], [Mask.Flags]), and its packed bits ([FromBytes],
// [Mask.Bytes]). The package reads and writes no .npy files itself: .npy
// lives in checkpoint/npy, a layer above this one, which turns arrays into
// masks with these functions (npy.ReadMask and npy.WriteMask). Arrows of the
// layer diagram point down only, and one .npy parser is enough.
//
// # Attention masks
//
// An [Attention] holds an attention mask in any of the forms models use — a
// pairwise boolean mask [B,Q,K] or [B,H,Q,K], a 2-D padding mask [B,L], query
// and key segment IDs, FlashAttention's cumulative sequence lengths
// (cu_seqlens), per-batch lengths — and converts between them where the
// target form can hold the mask. Causal (with a KV-cache offset), sliding
// window, chunked, token-type and key-length rules derive new masks; the
// outputs are boolean masks, additive biases (0 / −Inf) in float32, float16
// and bfloat16, position IDs, lengths and a text picture
// ([Attention.Visualize]). Malformed inputs are *[InputError] (errors.Is
// ErrAttentionInput), conversions the mask has no exact form for
// *[ConversionError] (errors.Is ErrNotRepresentable).
//
// # Errors
//
// Bad shapes and lengths are *[ShapeError] (errors.Is ErrShape), bad bytes
// *[DecodeError] (errors.Is ErrDecode), and misuse of a Buffer *[BufferError]
// wrapping ErrNotMaterialized, ErrReleased or ErrMismatch. Out-of-range
// element indices are programming errors and panic, as slice indices do;
// [Mask.Index] checks an index without panicking.
package mask
