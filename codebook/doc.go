// Package codebook holds lookup-table number formats: a code stands for one
// entry of a table of float32 values, chosen for the data instead of laid
// out on a uniform or floating-point grid.
//
// A [Table] maps codes to entries (decoding is a lookup) and values to the
// code of their nearest entry (encoding), with a stated rule for values
// exactly halfway ([Tie]) or, to match a library bit for bit, its own
// decision thresholds. The built-in tables are bitsandbytes' NF4 and FP4
// ([NF4], [FP4]), ggml's IQ4_NL ([IQ4NL]) and OCP E2M1 read as a table
// ([E2M1]); [NewTable] and [NewSignedTable] check and build others.
//
// The arithmetic, the tables' values and sources, and every tie rule are in
// docs/CODEBOOK.md of the repository.
package codebook
