// Package inputfiletest helps the readers' tests check that an input which
// is not a regular file is refused instead of read.
package inputfiletest
