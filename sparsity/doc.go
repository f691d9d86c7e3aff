// Package sparsity prunes tensors to N:M structured sparsity and stores the
// result the way sparse kernels and checkpoint loaders expect it.
//
// # Patterns and masks
//
// A [Pattern] N:M keeps N elements out of every group of M consecutive
// elements along one axis (1 ≤ N < M ≤ 16, M a power of two; 2:4 is what
// sparse tensor cores run). N counts kept values, as NVIDIA and TensorCast
// count them. Masks are *mask.Mask values of the tensor's shape, true = keep,
// as everywhere in this module.
//
// [Magnitude] keeps the N elements of largest |x| in each group; [ByScores]
// ranks by importance scores the caller computed; [Wanda] ranks by
// |w_j|·‖X_j‖, the weight times the activation norm of its input channel; a
// mask the caller brings is checked with [Check]. [NM] picks one of these from
// [Options], and [Prune] also zeroes what the mask drops. Tensors are float32
// slices in row-major order with their shape; the axis may be any (negative
// counts from the end, −1 is the last), and its length must be a multiple of
// M.
//
// Ranking rules, the same for every criterion: elements compare by magnitude
// (the float's bits without the sign, so −0 equals +0 and a NaN ranks above
// +Inf and is kept); among equal magnitudes the lower index along the axis
// wins; every group keeps exactly N, even when it holds fewer than N non-zero
// values. Pruning never changes a kept value or its sign. The selection loop
// is kernels.SelectNM.
//
// [Transposable24] keeps two per row and two per column in every 4×4 block of
// a matrix (the best of the 90 such patterns by kept magnitude), so that the
// matrix and its transpose are both 2:4. [Threshold] and [Density] make
// unstructured masks: |x| above a threshold, or a kept fraction of the
// tensor or of each row.
//
// # Storage
//
// [Compress] keeps the values of the kept elements (the sparse axis shrinks
// by M/N; within a group they stay in increasing position) and [Expand] puts
// them back with +0 at the pruned positions, bit for bit. The mask is stored
// either as packed bits, row by row ([PackRows]: ceil(cols/8) bytes per row,
// LSB first, numpy.packbits(bitorder="little")), or as index metadata
// ([EncodeIndices]: the log2(M)-bit position of every kept value within its
// group, LSB first). For 2:4 the index metadata is PyTorch's CUTLASS
// metadata; [EncodeCUTLASS] writes it in its int16/int32 words, plain or
// reordered for the kernels (and the float32 1:2 variant).
// [SparseBitmask] and [Sparse24Bitmask] are compressed-tensors'
// "sparse-bitmask" and "sparse-24-bitmask" forms. Every decoder checks its
// input and has a fuzz target. docs/SPARSITY.md gives the layouts byte by
// byte.
//
// # Statistics
//
// [Measure] reports what a mask keeps of a tensor: its density overall and
// the extremes over rows, the fraction of magnitude and of energy kept, the
// largest value pruned, and the SQNR of pruning, the figure tcast.Compare
// gives for a cast. [MaskDensity] and [RowDensity] need only the mask.
//
// # Errors
//
// Bad patterns are *[PatternError] (errors.Is ErrPattern), bad shapes, axes
// and lengths *[ShapeError] (ErrShape), negative or NaN scores and norms
// *[ScoreError] (ErrScores), masks that are not N:M *[GroupError] (ErrNotNM,
// naming the first bad group), and invalid stored data *[DecodeError]
// (ErrDecode). Nothing panics on bad input.
package sparsity
