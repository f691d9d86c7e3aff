//go:build unix && !linux

package main

import (
	"errors"
	"os"
)

// dropFileCapabilities makes a process held to file permissions: nothing to
// do for a user other than root; root cannot give up its override here.
func dropFileCapabilities() error {
	if os.Geteuid() == 0 {
		return errors.New("root overrides file permissions and cannot drop that here")
	}
	return nil
}
