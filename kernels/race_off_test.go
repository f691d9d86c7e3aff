//go:build !race

package kernels

// raceEnabled: the race detector is on (tests that check no concurrency
// shrink their loops under it).
const raceEnabled = false
