package atomicfile

import (
	"strings"
	"testing"
)

// FuzzParseTemp: the names of a directory's entries (anything a file system
// holds) never make parseTemp panic; a name it takes apart starts with the
// temporary or moved-aside prefix, ends with "-" and its base, and gives a
// process id of 0 or more and an 8-character token; every name tempName
// makes for the fuzzed base (when it is a file name) comes apart into that
// prefix, this process's id and token, and the base; and IsTemporary
// agrees.
func FuzzParseTemp(f *testing.F) {
	for _, s := range []string{tempName(tmpPrefix, "model.safetensors"), tempName(oldPrefix, "out"),
		".tcast-tmp-12-0123456789abcdef-x", ".tcast-tmp--1-0123456789abcdef-x", ".tcast-tmp-1-short-x",
		".tcast-old-99999999999999999999-0123456789abcdef-x", ".model.safetensors.tcast-lock", "model.safetensors", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		prefix, pid, tok, base, ok := parseTemp(name)
		if ok {
			if !strings.HasPrefix(name, prefix) || (prefix != tmpPrefix && prefix != oldPrefix) ||
				!strings.HasSuffix(name, "-"+base) || base == "" || pid < 0 || len(tok) != 8 {
				t.Fatalf("%q: prefix %q, pid %d, token %q, base %q", name, prefix, pid, tok, base)
			}
			if !IsTemporary(name) {
				t.Fatalf("%q parses but is not temporary", name)
			}
		}
		if name == "" || strings.ContainsAny(name, "/\x00") {
			return
		}
		for _, p := range []string{tmpPrefix, oldPrefix} {
			tn := tempName(p, name)
			gp, _, gt, gb, ok := parseTemp(tn)
			if !ok || gp != p || gt != token || gb != name {
				t.Fatalf("tempName(%q, %q) = %q comes apart as %q %q %q %v", p, name, tn, gp, gt, gb, ok)
			}
		}
	})
}
