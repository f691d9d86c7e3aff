package convert

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
)

// missingTensor is Verify's error for tensor name of orig (checkpoint
// src) that conv (checkpoint c) does not hold. When one of the two is a
// GGUF file and the other not, and the GGUF records no renames of its own
// conversion (tcast convert of that very checkpoint writes them, so that
// Verify pairs GGUF and Hugging Face names), the names differ by
// convention: the error says so and what to compare instead.
func missingTensor(orig, conv string, src, c *load.Checkpoint, renamed map[string]string, name string) error {
	err := fmt.Errorf("%w: %s has tensor %s, %s does not", ErrMismatch, orig, name, conv)
	if len(renamed) > 0 || (src.GGUF() == nil) == (c.GGUF() == nil) {
		return err
	}
	gg, hf := conv, orig
	if src.GGUF() != nil {
		gg, hf = orig, conv
	}
	return fmt.Errorf("%w; %s has GGUF tensor names (blk.0.attn_q.weight, ...), %s Hugging Face ones "+
		"(model.layers.0.self_attn.q_proj.weight, ...): verify pairs them only when tcast convert made the GGUF from "+
		"that checkpoint (it records the names). Verify %s against the checkpoint it was converted from, "+
		"or convert %s to GGUF and verify that file", err, gg, hf, conv, orig)
}
