//go:build !amd64 || purego

package kernels

// cpuTier returns tierGeneric: without assembly for this build, the pure-Go
// reference code is all there is.
func cpuTier() tier { return tierGeneric }
