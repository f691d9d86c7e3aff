// Package badinput holds no code: its test runs the corpus of hostile inputs
// under testdata/bad (at the repository root) through every reader and
// grammar of the module, and regenerates the corpus with
//
//	go test ./internal/badinput -run TestBadCorpus -update
//
// Each input must be refused with a typed error (errors.Is or errors.As
// matches it) whose message names the file and the field, within a time and
// memory bound, without a panic. testdata/bad/README.md describes the cases.
package badinput
