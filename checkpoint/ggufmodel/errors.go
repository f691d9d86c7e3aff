package ggufmodel

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// MissingKeyError reports a GGUF metadata key that llama.cpp requires for the
// architecture and that the input does not give.
type MissingKeyError struct {
	// Key is the GGUF key, such as "llama.context_length".
	Key string
	// File is the input file the value is read from, such as "config.json".
	File string
	// Fields are the names the value is looked up under in File, in the
	// order tried.
	Fields []string
}

// Error returns a message such as `config.json has none of
// max_position_embeddings, n_positions: llama.cpp requires
// llama.context_length`.
func (e *MissingKeyError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch len(e.Fields) {
	case 0:
		b.WriteString(" is missing")
	case 1:
		b.WriteString(" has no ")
		b.WriteString(e.Fields[0])
	default:
		b.WriteString(" has none of ")
		b.WriteString(strings.Join(e.Fields, ", "))
	}
	b.WriteString(": llama.cpp requires ")
	b.WriteString(e.Key)
	return b.String()
}

// UnsupportedError reports an input value the conversion to a llama.cpp
// model does not support, or one llama.cpp would refuse.
type UnsupportedError struct {
	// File is the input file, such as "config.json" or "tokenizer.json".
	File string
	// Field is the field at fault, such as "rope_scaling.rope_type".
	Field string
	// Value is the value found, "" when the field is absent.
	Value string
	// Reason says why it is not supported.
	Reason string
}

// Error returns a message such as `tokenizer.json: model.type
// "WordPiece": ...`.
func (e *UnsupportedError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	if e.Value != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(e.Value))
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// TensorError reports a tensor the architecture's llama.cpp loader would
// refuse: one it does not use, one it needs that is missing, or one of the
// wrong shape.
type TensorError struct {
	// Arch is the GGUF architecture, such as "llama".
	Arch string
	// Tensor is the tensor's name in the input (Hugging Face) or, for a
	// missing tensor, its GGUF name.
	Tensor string
	// Reason says what is wrong.
	Reason string
}

// Error returns a message such as `llama: tensor
// "model.layers.0.mlp.fc1.weight": not a tensor of the architecture`.
func (e *TensorError) Error() string {
	return e.Arch + ": tensor " + strconv.Quote(e.Tensor) + ": " + e.Reason
}

// InDir returns err, an error of Detect (about file, config.json) for the
// checkpoint directory dir, naming the file by its path in dir
// ("llama/config.json has none of ..."): a *MissingKeyError or
// *UnsupportedError whose File is a bare file name gets the path as File
// (in a copy), one that names a path already is returned as it is, another
// error is wrapped with the path of file.
func InDir(err error, dir, file string) error {
	var mk *MissingKeyError
	var ue *UnsupportedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mk) && filepath.Base(mk.File) == mk.File:
		c := *mk
		c.File = filepath.Join(dir, mk.File)
		return &c
	case errors.As(err, &ue) && filepath.Base(ue.File) == ue.File:
		c := *ue
		c.File = filepath.Join(dir, ue.File)
		return &c
	case mk != nil || ue != nil:
		return err // names its file by a path already
	}
	return fmt.Errorf("%s: %w", filepath.Join(dir, file), err)
}
