//go:build unix

package safetensors_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// An index whose shard is a symbolic link out of the index's directory is
// refused, so that a downloaded index cannot make a reader open any file.
func ExampleOpenIndex_linkOutside() {
	root, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	ck := filepath.Join(root, "checkpoint")
	if err := os.Mkdir(ck, 0o755); err != nil {
		log.Fatal(err)
	}
	outside := filepath.Join(root, "elsewhere.safetensors")
	t := []safetensors.Tensor{{Name: "x", DType: safetensors.U8, Shape: []int{1}, Data: []byte{1}}}
	if err := safetensors.WriteFile(outside, t, nil); err != nil {
		log.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ck, "a.safetensors")); err != nil {
		log.Fatal(err)
	}
	index := filepath.Join(ck, safetensors.IndexFileName)
	if err := os.WriteFile(index, []byte(`{"weight_map":{"x":"a.safetensors"}}`), 0o644); err != nil {
		log.Fatal(err)
	}
	_, err = safetensors.OpenIndex(index)
	fmt.Println(errors.Is(err, safetensors.ErrLinkOutside))
	// Output:
	// true
}
