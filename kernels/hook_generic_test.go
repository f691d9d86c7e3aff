//go:build !amd64 || purego

package kernels

// alwaysNonTemporal does nothing: the Go reference has no non-temporal path.
func alwaysNonTemporal() (restore func()) { return func() {} }
