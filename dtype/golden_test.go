package dtype

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestInfoGolden guards the constants of the named formats and a selection of
// grammar names against unnoticed change. The file was written by this code with
// -update; its values were checked against TensorCast's golden set G1
// (docs/TENSORCAST.md §5) and docs/NUMERICS.md §1 by
// TestConstantsG1 and TestFormatTable, which do not read it.
func TestInfoGolden(t *testing.T) {
	names := append(Names(), "e4m3fnuz", "e5m2fnuz", "e2m1fnuz", "e2m3fnuz", "e3m2fnuz", "e2m1ieee",
		"e3m3", "e5m3", "e8m0b140", "e5m0", "int8", "int4", "uint8", "uint4", "int16", "q1.6", "q1.2", "float12")
	var infos []Info
	for _, n := range names {
		infos = append(infos, MustParse(n).Info())
	}
	got, err := json.MarshalIndent(infos, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", "formats.golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./dtype -run TestInfoGolden -update")
	if string(want) != string(got) {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
		for i := range min(len(wl), len(gl)) {
			if wl[i] != gl[i] {
				t.Fatalf("%s:%d differs: want %q, got %q (rerun with -update if the change is intended)", path, i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("%s: %d lines, got %d", path, len(wl), len(gl))
	}
}
