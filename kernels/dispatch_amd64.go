//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// cpuTier returns the best tier the CPU (and the OS, for the wider register
// state) supports. x/sys/cpu reports AVX2 and AVX-512 only when the OS saves
// their registers.
func cpuTier() tier {
	x := &cpu.X86
	if !x.HasAVX2 || !x.HasF16C {
		return tierGeneric
	}
	if x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL {
		return tierAVX512
	}
	return tierAVX2
}
