// Package codebook holds lookup-table number formats: a code stands for one
// entry of a table of float32 values, chosen for the data instead of laid
// out on a uniform or floating-point grid.
//
// A [Table] maps codes to entries (decoding is a lookup) and values to the
// code of their nearest entry (encoding), with a stated rule for values
// exactly halfway ([Tie]) or, to match a library bit for bit, its own
// decision thresholds. The built-in tables are bitsandbytes' NF4 and FP4
// ([NF4], [FP4]), ggml's IQ4_NL ([IQ4NL]) and OCP E2M1 read as a table
// ([E2M1]); [NewTable] and [NewSignedTable] check and build others, and
// [KMeans] and [KMeansPerChannel] learn them from data (Lloyd's algorithm,
// seeded k-means++ or quantile start).
//
// A [Codebook] is 2^M tables sharing an index width: each tile or subtile
// of a tensor picks the table that represents it best ([Codebook.Select], by
// squared error or a caller's [Criterion]) and records its index in a meta
// field, packed LSB first ([PackMeta], [UnpackMeta]). [Parse] generates
// TensorCast's implicit codebooks from their names (cb41fi_e2m2fnuz,
// icb44fi_e2m3fnuz, ...: f, i, p and s patterns with index and exponent
// offsets). Package tcast turns codebooks into datatypes (mxfi4, nf4, the
// icb44fi family, ...).
//
// The arithmetic, the tables' values and sources, every tie rule, the
// generator grammar and where it departs from TensorCast's code are in
// docs/CODEBOOK.md of the repository.
package codebook
