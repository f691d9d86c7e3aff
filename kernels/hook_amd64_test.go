//go:build amd64 && !purego

package kernels

// alwaysNonTemporal makes the conversions use their non-temporal kernels at
// every size until the returned function is called.
func alwaysNonTemporal() (restore func()) {
	old := nonTemporalMin
	nonTemporalMin = 0
	return func() { nonTemporalMin = old }
}
