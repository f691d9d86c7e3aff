package main

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/filetype"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// This file is where the library's typed errors become tcast's messages:
// the library names files, tensors, offsets and Options fields; tcast
// adds the flag and the next step. message is the one entry point;
// nextStep holds one case per error type (add new types there), and
// wrongKind the message for a file of the wrong kind.

// message returns the line tcast prints (after "tcast CMD: ") for err, the
// error of command cmd: what the file at fault is when it is of the wrong
// kind, else the error followed by the next step to take, if one applies.
func message(cmd string, err error) string {
	if m := wrongKind(cmd, err); m != "" {
		return m
	}
	if step := nextStep(cmd, err); step != "" {
		return err.Error() + "; " + step
	}
	return err.Error()
}

// nextStep returns what to do about err, or "" when its message says it
// already or no step applies. The first case that matches decides.
func nextStep(cmd string, err error) string {
	var (
		ne *imatrix.NotImatrixError
		fe *fileerr.FormatError
		nc *convert.NothingCastError
	)
	switch {
	case errors.As(err, &nc):
		return "choose another -layout, -dtype or -axis, or name tensors to cast with -include"
	case errors.Is(err, convert.ErrNoModelFile):
		return "or write a generic GGUF with -gguf-generic"
	case errors.Is(err, convert.ErrNameTooLong):
		return "shorten names with -rename RE=REPL"
	case errors.As(err, &ne):
		return "" // the message says what the file must be
	case errors.Is(err, npy.ErrNotMask) && cmd == "cast":
		return "save the mask with numpy as bool or uint8 in C order (numpy.ascontiguousarray)"
	case errors.Is(err, npy.ErrNotMask):
		return ""
	case errors.Is(err, npy.ErrNotVector) && cmd == "convert":
		return "give an .npz holding one 1-D norm vector per weight, named as the weight, " +
			"as numpy.savez writes it"
	case errors.Is(err, npy.ErrNotVector):
		return "give one norm per index along the scaled axis"
	case errors.As(err, &fe):
		return formatStep(fe)
	}
	return ""
}

// damaged is the step for a file whose content is broken.
const damaged = "download or export it again"

// formatStep is the next step for a file a reader refused: by what the
// problem is (its Kind) and, where the remedy differs, by the reader.
func formatStep(fe *fileerr.FormatError) string {
	switch {
	case fe.Format == "castdir":
		return "the cast directory is damaged or was edited: write it again with tcast cast"
	case fe.Kind == fileerr.MissingFile:
		return "download every shard the index lists into " + filepath.Dir(fe.Path)
	case fe.Kind == fileerr.LinkOutside:
		return "copy the file into that directory instead of linking it"
	case isFileSystem(fe.Err):
		return "" // a file that cannot be read, not one whose content is wrong
	case fe.Kind == fileerr.TooLarge && fe.Format == "npz":
		return "the archive is damaged; recreate it with numpy.savez"
	case fe.Kind == fileerr.TooLarge && fe.Format == "safetensors":
		return "the file is damaged or hostile; split a real checkpoint of that many tensors " +
			"into shards"
	case fe.Kind == fileerr.TooLarge:
		return "the file is damaged or hostile: it claims more than tcast reads " +
			"(docs/FORMAT.md, Limits on input files)"
	case fe.Kind == fileerr.Unsupported && fe.Format == "gguf":
		return "tcast reads little-endian GGUF version 3: convert the file with a current llama.cpp"
	case fe.Kind == fileerr.Unsupported && (fe.Format == "npy" || fe.Format == "npz"):
		return "save the array again with numpy.save, as a bool, integer or float array"
	case fe.Kind == fileerr.Unsupported:
		return "tcast does not read this variant of the format (docs/FORMAT.md)"
	case fe.Kind == fileerr.Truncated:
		return "the file is truncated: " + damaged
	case fe.Kind == fileerr.NotFormat:
		return "if it is one, it is damaged: " + damaged
	}
	return "the file is damaged or not what its name says: " + damaged
}

// isFileSystem reports whether err is the operating system's error of
// opening or reading a file, or the refusal of a path that is no regular
// file.
func isFileSystem(err error) bool {
	var (
		pe *fs.PathError
		nr *inputfile.NotRegularError
	)
	return errors.As(err, &pe) || errors.As(err, &nr)
}

// Nouns of the kinds of file, as messages name them.
var (
	// isNoun says what a file Detect recognised is.
	isNoun = map[filetype.Type]string{
		filetype.Safetensors: "a safetensors checkpoint",
		filetype.GGUF:        "a GGUF file",
		filetype.Index:       "a sharded checkpoint's index",
		filetype.Config:      "a model configuration",
		filetype.JSON:        "a JSON file",
		filetype.NPY:         "a NumPy .npy array",
		filetype.Zip:         "a zip archive (an .npz, or a PyTorch .pt/.bin)",
		filetype.Pickle:      "a Python pickle (a PyTorch .bin/.pt)",
		filetype.Checkpoint:  "a checkpoint directory",
		filetype.CastDir:     "a cast directory (written by tcast cast)",
		filetype.Dir:         "a directory",
	}
	// wantNoun says what each reader reads, by FormatError.Format.
	wantNoun = map[string]string{
		"npy": "an .npy array", "npz": "an .npz archive",
		"gguf": "a GGUF file", "safetensors": "a checkpoint", "load": "a checkpoint",
	}
	// takes says what each command, or a command's flag, reads.
	takes = map[string]string{
		"cast":       "tcast cast takes one .npy array",
		"convert":    "tcast convert takes a checkpoint",
		"inspect":    "tcast inspect takes a checkpoint or a cast directory",
		"verify":     "tcast verify takes checkpoints or cast directories",
		"report":     "tcast report takes checkpoints",
		"decompress": "tcast decompress takes a cast directory or a checkpoint",
		"convert -act-norms": "-act-norms takes an .npz of 1-D norm vectors, " +
			"one per weight (numpy.savez)",
		"cast -act-norms": "-act-norms takes a 1-D float .npy array",
		"cast -keep":      "-keep takes a mask: a bool or uint8 .npy array",
	}
)

// readerKinds are the kinds of file each reader reads, by
// FormatError.Format: a reader's NotFormat error for a file Detect says
// is of one of them says nothing Detect can add to.
var readerKinds = map[string][]filetype.Type{
	"npy": {filetype.NPY}, "npz": {filetype.Zip},
	"gguf": {filetype.GGUF}, "safetensors": {filetype.Safetensors}, "load": checkpointKinds,
}

// checkpointKinds are the kinds of file and directory that hold a
// checkpoint.
var checkpointKinds = []filetype.Type{
	filetype.Safetensors, filetype.GGUF, filetype.Index, filetype.Checkpoint,
}

// wrongKind returns the message for err when it refuses a file of the
// wrong kind (a reader's NotFormat error, a directory where a file is
// read): what the file is, when Detect can tell, what was wanted and what
// the command (or its flag) takes; "" for other errors.
func wrongKind(cmd string, err error) string {
	var (
		ff *flagFileError
		fe *fileerr.FormatError
		nr *inputfile.NotRegularError
		ne *imatrix.NotImatrixError
	)
	flag := ""
	if errors.As(err, &ff) {
		flag = ff.flag
	}
	switch {
	case errors.As(err, &ne):
		return "" // says what an importance matrix is
	case errors.As(err, &fe) && fe.Kind == fileerr.NotFormat && wantNoun[fe.Format] != "":
		is := filetype.Detect(fe.Path)
		if isNoun[is] == "" || slices.Contains(readerKinds[fe.Format], is) {
			// Nothing to add to what the reader says but what the
			// command takes.
			return err.Error() + withTakes(cmd, flag, filetype.Unknown) + "; " + formatStep(fe)
		}
		want := wantNoun[fe.Format]
		if fe.Index != "" {
			want = "the safetensors file " + fileerr.Name(fe.Index) + " names as a shard"
		}
		return fileerr.Name(fe.Path) + " is " + isNoun[is] + ", not " + want +
			withTakes(cmd, flag, is)
	case errors.As(err, &nr) && nr.Mode.IsDir():
		is := filetype.Detect(nr.Path)
		return fileerr.Name(nr.Path) + " is " + isNoun[is] + ", not a regular file" +
			withTakes(cmd, flag, is)
	}
	return ""
}

// withTakes is "; " and what command cmd (or its flag, if not "") takes,
// then, for the command's input, what to use for a file of kind is
// instead, when one applies.
func withTakes(cmd, flag string, is filetype.Type) string {
	if flag != "" {
		if t := takes[cmd+" "+flag]; t != "" {
			return "; " + t
		}
		return ""
	}
	t := takes[cmd]
	if t == "" {
		return ""
	}
	var use string
	switch {
	case is == filetype.NPY && cmd != "cast":
		use = "cast arrays with tcast cast"
	case slices.Contains(checkpointKinds, is) && cmd == "cast":
		use = "use tcast convert for checkpoints"
	case is == filetype.Zip && cmd == "cast":
		use = "save one of its arrays with numpy.save"
	case (is == filetype.Zip || is == filetype.Pickle) && cmd != "cast":
		use = "save a PyTorch checkpoint as safetensors first"
	case is == filetype.Config || is == filetype.JSON:
		use = "give the directory that holds the checkpoint, or its .safetensors file or index"
	case is == filetype.CastDir && (cmd == "convert" || cmd == "report" || cmd == "cast"):
		use = "tcast inspect, verify and decompress read cast directories"
	}
	if use == "" {
		return "; " + t
	}
	return "; " + t + ": " + use
}

// flagFileError is the error of reading the file a flag names: its message
// is the flag's and the error's, and a file of the wrong kind is said to be
// what the flag takes.
type flagFileError struct {
	flag string // "-act-norms"
	err  error
}

func (e *flagFileError) Error() string { return e.flag + ": " + e.err.Error() }
func (e *flagFileError) Unwrap() error { return e.err }

// flagFile returns err, the error of reading the file of flag, as a
// *flagFileError (nil for nil).
func flagFile(flag string, err error) error {
	if err == nil {
		return nil
	}
	return &flagFileError{flag, err}
}
