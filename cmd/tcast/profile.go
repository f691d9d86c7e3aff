package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// profileFlags are the -cpuprofile and -memprofile flags that convert, cast
// and decompress share. The profiles are outputs like any other: never an
// input, never over or inside the command's own output, an existing file
// replaced only with -force, and each appears whole (under a temporary name
// until the command ends) when the command succeeds, and not at all when it
// fails.
type profileFlags struct {
	cpu, mem string
}

// addProfileFlags declares -cpuprofile and -memprofile on fs.
func addProfileFlags(fs *flag.FlagSet) *profileFlags {
	p := &profileFlags{}
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to `FILE` (read it with go tool pprof)")
	fs.StringVar(&p.mem, "memprofile", "", "write a heap profile (allocations, after the work) to `FILE`")
	return p
}

// profiling is a started set of profiles; stop finishes and publishes them.
type profiling struct {
	cpu, mem *atomicfile.Output
	cpuFile  *os.File
	memRate  int
}

// start checks the profile paths against the command's inputs (listed by
// inputs, which is called only when a profile was asked for) and output
// (out, which may be empty) and starts the CPU profile. Call stop on the
// result when the work is done, whatever its outcome; it is nil-safe, as is
// the result when no profile was asked for.
func (p *profileFlags) start(force bool, out string, inputs func() []string) (*profiling, error) {
	if p.cpu == "" && p.mem == "" {
		return nil, nil
	}
	in := slices.DeleteFunc(inputs(), func(s string) bool { return s == "" })
	if p.cpu != "" && p.mem != "" && filepath.Clean(p.cpu) == filepath.Clean(p.mem) {
		return nil, usagef("-cpuprofile and -memprofile name the same file %s", p.cpu)
	}
	for _, f := range []struct{ flag, path string }{{"-cpuprofile", p.cpu}, {"-memprofile", p.mem}} {
		if f.path == "" {
			continue
		}
		if err := atomicfile.CheckOutput(f.path, in...); err != nil {
			return nil, fmt.Errorf("%s: %w", f.flag, err)
		}
		if out != "" && overlaps(f.path, out) {
			// The profile must survive the output being written (or replaced
			// with -force): neither the output nor inside it.
			return nil, usagef("%s %s: the profile would be written over or inside the output %s", f.flag, f.path, out)
		}
	}
	pr := &profiling{}
	begin := func(flagName, path string) (*atomicfile.Output, error) {
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			return nil, fmt.Errorf("%s: %w", flagName, err)
		}
		o, err := atomicfile.Begin(path, atomicfile.Options{Force: force})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flagName, err)
		}
		return o, nil
	}
	var err error
	if p.mem != "" {
		if pr.mem, err = begin("-memprofile", p.mem); err != nil {
			return nil, err
		}
		// Sample every allocation of 64 KiB and up on average (the default
		// 512 KiB misses the per-tensor buffers of small checkpoints).
		pr.memRate = runtime.MemProfileRate
		runtime.MemProfileRate = 64 << 10
	}
	if p.cpu != "" {
		if pr.cpu, err = begin("-cpuprofile", p.cpu); err != nil {
			pr.abort()
			return nil, err
		}
		if pr.cpuFile, err = os.OpenFile(pr.cpu.Path(), os.O_WRONLY|os.O_TRUNC, 0); err == nil {
			err = pprof.StartCPUProfile(pr.cpuFile)
		}
		if err != nil {
			pr.abort()
			return nil, fmt.Errorf("-cpuprofile %s: %w", p.cpu, err)
		}
	}
	return pr, nil
}

// checkpointInputs returns path and, when it opens as a checkpoint, every
// file it reads (shards, config files): the inputs a profile must not
// replace. An input that does not open is left to the command to report.
func checkpointInputs(path string) []string {
	in := []string{path}
	if c, err := load.Open(path); err == nil {
		in = append(in, c.Files()...)
		c.Close()
	}
	return in
}

// overlaps reports whether path is out or lies inside it, as written or with
// symbolic links resolved (out need not exist yet).
func overlaps(path, out string) bool {
	if atomicfile.CheckOutput(path, out) != nil {
		return true
	}
	p, err1 := filepath.Abs(path)
	o, err2 := filepath.Abs(out)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(o, p)
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// abort removes the profiles' temporaries.
func (pr *profiling) abort() {
	if pr.cpuFile != nil {
		pr.cpuFile.Close()
	}
	for _, o := range []*atomicfile.Output{pr.cpu, pr.mem} {
		if o != nil {
			o.Abort()
		}
	}
	if pr.mem != nil {
		runtime.MemProfileRate = pr.memRate
	}
}

// stop ends the CPU profile, writes the heap profile and publishes both when
// the command succeeded (err is nil); after a failure it removes them. It
// returns err, or the error of writing a profile when err is nil.
func (pr *profiling) stop(err error) error {
	if pr == nil {
		return err
	}
	defer pr.abort() // after a Commit, Abort does nothing
	if err != nil {
		pprof.StopCPUProfile()
		return err
	}
	var perr error
	if pr.cpu != nil {
		pprof.StopCPUProfile()
		perr = pr.cpuFile.Close()
		pr.cpuFile = nil
		if perr == nil {
			perr = pr.cpu.Commit()
		}
		if perr != nil {
			perr = fmt.Errorf("-cpuprofile: %w", perr)
		}
	}
	if pr.mem != nil && perr == nil {
		runtime.GC() // the heap profile shows the state after the last collection
		f, e := os.OpenFile(pr.mem.Path(), os.O_WRONLY|os.O_TRUNC, 0)
		if e == nil {
			e = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); e == nil {
				e = cerr
			}
		}
		if e == nil {
			e = pr.mem.Commit()
		}
		if e != nil {
			perr = fmt.Errorf("-memprofile: %w", e)
		}
	}
	return perr
}
