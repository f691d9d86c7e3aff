package safetensors

import (
	"math"

	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// Release drops the named tensor's pages of a memory-mapped file from the
// process's resident memory (they stay in the page cache, and a later Bytes
// reads them again). Streaming converters call it when done with a tensor so
// that resident memory tracks the tensors in flight, not the file. It does
// nothing for files read through ReadAt or unknown names.
func (f *File) Release(name string) { f.ReleaseRange(name, 0, math.MaxInt64) }

// ReleaseRange is Release for the n bytes of the named tensor from byte off
// (clipped to the tensor): the whole pages inside them leave the resident
// set. A converter that streams a large tensor calls it for each piece it is
// done with, so that resident memory tracks the pieces in flight.
func (f *File) ReleaseRange(name string, off, n int64) {
	i, ok := f.index[name]
	if !ok || f.data == nil || f.closed.Load() {
		return
	}
	t := &f.tensors[i]
	inputfile.ReleaseRange(f.data[t.Offset:t.Offset+t.Size], off, n)
}

// ReleaseRange is File.ReleaseRange on the shard holding the named tensor.
func (s *Sharded) ReleaseRange(name string, off, n int64) {
	if shard, ok := s.where[name]; ok {
		if f := s.files[shard]; f != nil {
			f.ReleaseRange(name, off, n)
		}
	}
}

// Release is File.Release on the shard holding the named tensor.
func (s *Sharded) Release(name string) { s.ReleaseRange(name, 0, math.MaxInt64) }
