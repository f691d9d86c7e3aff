package verify

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
)

// MissingError reports a tensor of the source that the converted
// checkpoint does not hold. It matches ErrMismatch.
type MissingError struct {
	Orig, Conv string // the source and the converted checkpoint
	Tensor     string // the source's tensor
	// GGUF is set when one of the two is a GGUF file and the other not,
	// and the GGUF records no renames of a conversion (convert writes
	// them, so that Checkpoints pairs GGUF and Hugging Face names): the
	// two name their tensors by different conventions. It is the GGUF
	// file of the two, Orig or Conv.
	GGUF string
}

func (e *MissingError) Error() string {
	msg := fmt.Sprintf("%v: %s has tensor %s, %s does not", ErrMismatch, e.Orig, e.Tensor, e.Conv)
	if e.GGUF == "" {
		return msg
	}
	return fmt.Sprintf("%s; %s has GGUF tensor names (blk.0.attn_q.weight, ...), %s Hugging Face ones "+
		"(model.layers.0.self_attn.q_proj.weight, ...)", msg, e.GGUF, e.Other())
}

// Unwrap returns ErrMismatch.
func (e *MissingError) Unwrap() error { return ErrMismatch }

// Other returns the one of Orig and Conv that GGUF is not, "" when GGUF
// is not set.
func (e *MissingError) Other() string {
	switch e.GGUF {
	case "":
		return ""
	case e.Orig:
		return e.Conv
	}
	return e.Orig
}

// missing is the error for the source's tensor name that conv does not
// hold.
func (p *pairing) missing(name string) error {
	err := &MissingError{Orig: p.orig, Conv: p.conv, Tensor: name}
	if len(p.renamed) > 0 || (p.src.GGUF() == nil) == (p.c.GGUF() == nil) {
		return err
	}
	err.GGUF = p.conv
	if p.src.GGUF() != nil {
		err.GGUF = p.orig
	}
	return err
}

// ImatrixError reports an entry of Options.Imatrix whose size does not
// match the converted weight it was found for.
type ImatrixError struct {
	Tensor string // the source's tensor
	Path   string // the matrix's file
	Err    error  // an *imatrix.SizeError
}

func (e *ImatrixError) Error() string {
	return fmt.Sprintf("tensor %s: Options.Imatrix %s: %v", e.Tensor, filepath.Base(e.Path), e.Err)
}

// Unwrap returns Err.
func (e *ImatrixError) Unwrap() error { return e.Err }

// checkEntrySize reports, as convert does, an importance entry whose size
// does not match the weight of the given shape (an *imatrix.SizeError
// naming the entry and both sizes), but for the token embedding, which
// convert quantizes without it then, and for an entry that records no
// activations, which convert does not use.
func checkEntrySize(im *imatrix.Imatrix, name string, shape []int) error {
	if noCounts, allZero := measure.Unrecorded(im, name); noCounts || allZero {
		return nil
	}
	cols, experts := measure.Matrices(shape)
	_, err := im.Vector(name, cols, experts)
	var se *imatrix.SizeError
	if errors.As(err, &se) && ggufmix.CategoryOf(name) == ggufmix.TokenEmbd {
		return nil
	}
	return err
}
