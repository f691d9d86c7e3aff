// Command tcast casts tensors to low-precision number formats.
//
// Usage:
//
//	tcast convert IN -dtype NAME -o OUT [-layout LAYOUT] [-include RE] [-exclude RE] [-axis N]
//	              [-scale-mode MODE] [-workers K] [-shard-size SIZE] [-rename RE=REPL] [-force] [-json]
//	              [-sparsity N:M [-sparsity-criterion magnitude|wanda] [-act-norms NORMS.npz]
//	               [-sparsity-format dense|sparse-bitmask|sparse-24-bitmask]]
//	              [-gguf-generic] [-gguf-pre NAME] [-gguf-pure] [-type-for RE=TYPE ...] [-imatrix FILE]
//	              [-scale-search] [-rotate hadamard[:BLOCK]] [-report FILE.html]
//	tcast verify [-min-sqnr DB] [-imatrix FILE] [-json] ORIG CONVERTED
//	tcast verify -compare [-label NAMES] [-min-sqnr DB] [-imatrix FILE] [-json] ORIG CONVERTED...
//	tcast report -o REPORT.html [-title TITLE] [-label NAMES] [-imatrix FILE] [-histograms N] [-worst N] [-masks N]
//	             [-force] ORIG CONVERTED...
//	tcast inspect [-json] [-stats=false] CHECKPOINT|CASTDIR
//	tcast inspect -mask NAME [-mask-rows N] [-mask-cols N] CHECKPOINT|CASTDIR
//	tcast synth -o FILE -layers L -hidden H [-intermediate I] [-dtype bf16|f16|f32] [-seed S] [-vocab V]
//	            [-arch llama] [-force]
//	tcast cast -dtype NAME [-axis N] [-scale-mode MODE] [-round MODE] [-seed N]
//	           [-overflow MODE] [-full-range] [-keep MASK.npy] [-scale-search] [-force]
//	           [-sparsity N:M [-sparsity-criterion CRITERION] [-act-norms FILE]] -o DIR IN.npy
//	tcast decompress -o OUT.npy [-to f32|f16|bf16] [-force] CASTDIR
//	tcast decompress -o OUT.safetensors|OUTDIR [-to f32|f16|bf16] [-force] CHECKPOINT
//	tcast datatypes [-json] [NAME...]
//	tcast formats [-json] [NAME...]
//	tcast bench [-size dram,l2] [-kernels NAME,...|none] [-workers W] [-rounds R] [-dtype NAME,...] [-scale-search] [-n N]
//
// A CHECKPOINT is a .safetensors file, a sharded index, a .gguf file or a
// directory holding one, in any layout package load reads. Outputs appear
// whole or not at all, never over an input, and replace an existing output
// only with -force. Flags may come before or after the positional arguments.
// convert, cast and decompress take -cpuprofile FILE and -memprofile FILE,
// which write pprof profiles of the run (outputs too: never over an input).
// Run `tcast help COMMAND` (or `tcast COMMAND -h`) for the flags of one command.
package main

import (
	"errors"

	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/names"
)

// command is one subcommand of tcast.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"convert", "cast the weights of a checkpoint (safetensors, GGUF, any layout) and write them in a loader layout", runConvert},
	{"verify", "compare a converted checkpoint with its source: SQNR, MSE, max abs error per tensor", runVerify},
	{"report", "draw converted checkpoints against their source as one HTML page: per-layer SQNR and bits, worst tensors, error histograms, masks", runReport},
	{"inspect", "list a checkpoint's or cast directory's tensors, quantized weights and value statistics", runInspect},
	{"synth", "write a deterministic transformer-shaped checkpoint for benchmarks and tests", runSynth},
	{"cast", "cast an .npy array to a datatype: codes, dequantized values, packed bytes, scales, info.json", runCast},
	{"decompress", "rebuild a cast directory's values as .npy, or any checkpoint as plain safetensors", runDecompress},
	{"datatypes", "list the registered datatypes (mxfp4, nvfp4, int4_g128, ...)", runDatatypes},
	{"formats", "list the named number formats and their constants", runFormats},
	{"bench", "time the kernels, and with -dtype the casts of datatypes (-scale-search: with the scale search), against a memory read of the same size", runBench},
	{"version", "print the version of tcast, the Go version that built it and the kernels' tier", runVersion},
}

// usageError is an error in the command line; tcast exits with status 2 for it.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// count returns "1 argument", "2 arguments": n and noun, plural unless n
// is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func main() {
	// On SIGINT and SIGTERM, outputs being written are removed before exit.
	stop := atomicfile.HandleSignals(func(sig os.Signal, removed []string) {
		interrupted(os.Stderr, sig, removed)
	})
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interrupted says, on a line of its own, that a signal stopped tcast and
// which unfinished outputs it removed.
func interrupted(w io.Writer, sig os.Signal, removed []string) {
	if progressOpen.Load() {
		fmt.Fprintln(w) // end the progress bar's line
	}
	name := "SIGTERM"
	if sig == os.Interrupt {
		name = "Ctrl-C (SIGINT)"
	}
	if len(removed) == 0 {
		fmt.Fprintf(w, "tcast: stopped by %s; no output was being written\n", name)
		return
	}
	what := "output " + removed[0]
	if len(removed) > 1 {
		what = "outputs " + strings.Join(removed, ", ")
	}
	fmt.Fprintf(w, "tcast: stopped by %s; removed the unfinished %s (nothing of it appeared); "+
		"run the command again to write it\n", name, what)
}

// run executes a tcast command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		printUsage(stdout)
		return 0
	}
	name := args[0]
	if name == "help" {
		if len(args) > 1 {
			return run([]string{args[1], "-h"}, stdout, stderr)
		}
		printUsage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		var ue *usageError
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "tcast %s: %v (see tcast help %s)\n", name, err, name)
			return 2
		default:
			fmt.Fprintf(stderr, "tcast %s: %s\n", name, message(name, err))
			return 1
		}
	}
	known := make([]string, len(commands))
	for i, c := range commands {
		known[i] = c.name
	}
	msg := fmt.Sprintf("tcast: unknown command %q", name)
	if c := names.Closest(name, known, 3); len(c) > 0 {
		msg += " (did you mean " + strings.Join(c, ", ") + "?)"
	}
	fmt.Fprintln(stderr, msg)
	printUsage(stderr)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: tcast COMMAND [flags] [args]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun tcast help COMMAND (or tcast COMMAND -h) for the flags and arguments of a command.")
}

// parseArgs parses flags that may appear before, between or after positional
// arguments (a lone "--" ends the flags) and returns the positional arguments.
// For -h it prints usage and the flags to stdout and returns flag.ErrHelp.
func parseArgs(fs *flag.FlagSet, usage string, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(stdout, "usage: %s\n\nflags:\n", usage)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil, err
			}
			return nil, &usageError{flagMessage(fs, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag.Parse stops at the first positional argument, or after "--".
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagMessage turns an error of flag.Parse into a message that names the
// flag and, for an unknown one, the closest known flags.
func flagMessage(fs *flag.FlagSet, err error) string {
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !unknown {
		return err.Error()
	}
	var known []string
	fs.VisitAll(func(f *flag.Flag) { known = append(known, "-"+f.Name) })
	msg := "unknown flag " + name
	if c := names.Closest(name, known, 3); len(c) > 0 {
		msg += " (did you mean " + strings.Join(c, ", ") + "?)"
	}
	return msg
}
