package convert

import "github.com/tensorcast-go/tensorcast/checkpoint/verify"

// verifyTensors compares the converted checkpoint conv with its source
// orig (verify.Checkpoints) and returns the tensors' results.
func verifyTensors(orig, conv string) ([]verify.Result, error) {
	return verifyTensorsWith(orig, conv, verify.Options{})
}

// verifyTensorsWith is verifyTensors with options.
func verifyTensorsWith(orig, conv string, o verify.Options) ([]verify.Result, error) {
	rep, err := verify.Checkpoints(orig, conv, o)
	if err != nil {
		return nil, err
	}
	return rep.Tensors, nil
}
