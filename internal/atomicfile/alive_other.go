//go:build !unix

package atomicfile

// processAlive cannot tell on this system whether a process runs: known is
// false, and temporaries and locks of other processes count as abandoned
// only once they are older than a day.
func processAlive(pid int) (alive, known bool) { return false, false }
