package convert

import (
	"errors"
	"strings"
)

// OptionError reports an option of Convert that cannot apply, or options
// that do not go together, by the names of their Options fields. Its
// message reads "Options.Rotate does not go with Options.Imatrix: an
// importance matrix weights ...; unset Options.Rotate, or unset
// Options.Imatrix".
type OptionError struct {
	// Option is the Options field at fault, as Go names it: "Imatrix",
	// "GGUF.Pure", "Rotate".
	Option string
	// Value is the value the message is about (a datatype's name, a
	// pattern), or "".
	Value string
	// With is the field Option does not go with, or "".
	With string
	// Reason says why: the sentence after the option (and its value), or
	// after "does not go with With:".
	Reason string
	// Fixes are the changes of options that would resolve it, any one of
	// them; nil when the caller must choose other values altogether.
	Fixes []Fix
	// Err is the sentinel the error matches (ErrImatrixUnused, ...), or
	// nil.
	Err error
}

// Error returns the message in the library's terms.
func (e *OptionError) Error() string { return e.Message(LibraryWords) }

// Message returns the message with the options and fixes said in words.
func (e *OptionError) Message(words Words) string {
	var b strings.Builder
	b.WriteString(words.Option(e.Option))
	switch {
	case e.With != "":
		b.WriteString(" does not go with " + words.Option(e.With) + ": ")
	case e.Value != "":
		b.WriteString(": " + e.Value + " ")
	default:
		b.WriteString(" ")
	}
	b.WriteString(e.Reason)
	words.writeFixes(&b, e.Fixes)
	return b.String()
}

// Words says the options and fixes of OptionError, OutputError and Warning
// messages. Their Error and String methods use LibraryWords
// ("Options.Rotate", "unset Options.Rotate"); a command passes words of its
// own, such as its flags, to their Message methods.
type Words struct {
	Option func(field string) string // names an Options field
	Fix    func(Fix) string          // says a fix
	Output string                    // names an output path ("output")
	Want   string                    // leads what an output may be ("write to")
}

// LibraryWords name the options as Go does.
var LibraryWords = Words{
	Option: func(field string) string { return "Options." + field },
	Fix:    Fix.String,
	Output: "output",
	Want:   "write to",
}

// writeFixes appends "; FIX, or FIX" to b.
func (w Words) writeFixes(b *strings.Builder, fs []Fix) {
	for i, f := range fs {
		if i == 0 {
			b.WriteString("; ")
		} else {
			b.WriteString(", or ")
		}
		b.WriteString(w.Fix(f))
	}
}

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// A Fix is a change of Options that resolves an OptionError or a Warning:
// set Option to Value, or, with Value and Choose "", leave Option unset
// (its zero value). Choose, when set, describes the values to choose
// among ("a datatype that searches (mxfi4, ...)").
type Fix struct {
	Option string
	Value  string
	Choose string
}

// String says the fix in the library's terms: "set Options.Layout to
// gguf", "unset Options.Rotate".
func (f Fix) String() string {
	switch {
	case f.Choose != "":
		return "set Options." + f.Option + " to " + f.Choose
	case f.Value != "":
		return "set Options." + f.Option + " to " + f.Value
	}
	return "unset Options." + f.Option
}

// unset is the fix that drops option.
func unset(option string) Fix { return Fix{Option: option} }

// OutputError reports an output path that does not fit the layout: a file
// of another kind, or a file where the layout writes a directory.
type OutputError struct {
	Path   string // the output as given to Convert
	Layout string // the layout's name
	// Reason says what is wrong, after the path.
	Reason string
	// Want says what the output may be instead ("a directory or a
	// .safetensors file").
	Want string
	// Fixes are the changes of options that would make Path fit.
	Fixes []Fix
}

// Error returns the message in the library's terms.
func (e *OutputError) Error() string { return e.Message(LibraryWords) }

// Message returns the message with the output and fixes said in words.
func (e *OutputError) Message(words Words) string {
	var b strings.Builder
	b.WriteString(words.Output + " " + e.Path + " " + e.Reason)
	words.writeFixes(&b, e.Fixes)
	if e.Want != "" {
		sep := "; "
		if len(e.Fixes) > 0 {
			sep = ", or "
		}
		b.WriteString(sep + words.Want + " " + e.Want)
	}
	return b.String()
}

// Unwrap returns ErrOutput.
func (e *OutputError) Unwrap() error { return ErrOutput }

// ErrOutput is matched by an *OutputError.
var ErrOutput = errors.New("the output does not fit the layout")

// A Warning is something a conversion did that its caller may not have
// meant (Result.Warnings): generic GGUF output nobody asked for, an
// importance matrix with entries for no tensor, a pattern that matches no
// tensor, quantized weights cast again, weights cast with NaN or Inf in
// their source.
type Warning struct {
	// Option is the Options field the warning is about, or "".
	Option string
	// Value is the option's value it is about (a pattern, a file), or "".
	Value string
	// Text says what happened, after the option and its value.
	Text string
	// Fixes are changes of options that would avoid it.
	Fixes []Fix
}

// String returns the warning in the library's terms.
func (w Warning) String() string { return w.Message(LibraryWords) }

// Message returns the warning with its option and fixes said in words.
func (w Warning) Message(words Words) string {
	var b strings.Builder
	if w.Option != "" {
		b.WriteString(words.Option(w.Option) + " ")
		if w.Value != "" {
			b.WriteString(w.Value + " ")
		}
	}
	b.WriteString(w.Text)
	words.writeFixes(&b, w.Fixes)
	return b.String()
}

// MarshalText returns String, so that a Result's warnings are sentences
// in JSON.
func (w Warning) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// UnmarshalText reads a warning written by MarshalText: its whole text.
func (w *Warning) UnmarshalText(b []byte) error {
	*w = Warning{Text: string(b)}
	return nil
}
