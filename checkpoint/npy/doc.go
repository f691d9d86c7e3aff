// Package npy reads and writes NumPy .npy files.
//
// It supports the plain numeric dtypes used for tensor checkpoints: bool,
// signed and unsigned integers of 1, 2, 4 and 8 bytes, and IEEE floats of
// 2, 4 and 8 bytes, in either byte order, and format versions 1.0, 2.0 and
// 3.0. Structured, object, string, complex and datetime dtypes are rejected.
//
// Decoding is defensive: the header dictionary is parsed by a small
// hand-written parser (no evaluation), dimensions are checked for negative
// values and for overflow of the element count and byte size, headers larger
// than 1 MiB or with more than 32768 dimensions are rejected, and payload
// buffers grow only as data actually arrives, so a lying header cannot force
// a large allocation. Every decoding failure is reported as a *FormatError.
//
// Decoded payloads are always converted to little-endian byte order. Array
// data is returned in the element order stored in the file: Fortran-ordered
// files are not transposed, and Header.Fortran reports the order so callers
// can reject or handle such files.
//
// Writers produce exactly the header text NumPy writes for C-ordered arrays
// (format 1.0, or 2.0 when the header does not fit in 1.0), padded so that
// the payload starts at a multiple of 64 bytes.
package npy
