package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReport converts the iris fixture twice, the second time with
// -report, then draws both recipes with tcast report; and refuses what it
// should.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "mxfp4"), filepath.Join(dir, "mxfp4-24")
	code, _, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", a)
	require.Equal(t, 0, code, stderr)
	one := filepath.Join(dir, "one.html")
	code, _, stderr = tcast("convert", irisFixture, "-dtype", "mxfp4", "-sparsity", "2:4", "-o", b, "-report", one)
	require.Equal(t, 0, code, stderr)
	page, err := os.ReadFile(one)
	require.NoError(t, err)
	assert.Contains(t, string(page), "<h2>Sparsity masks</h2>")
	assert.Equal(t, 1, strings.Count(string(page), "<tr><td class=\"l\"><span class=\"key\""), "one recipe")

	both := filepath.Join(dir, "both.html")
	code, stdout, stderr := tcast("report", "-o", both, "-label", "plain,2:4", irisFixture, a, b)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "2 recipes compared with")
	page, err = os.ReadFile(both)
	require.NoError(t, err)
	s := string(page)
	assert.True(t, strings.HasPrefix(s, "<!DOCTYPE html>"))
	assert.Contains(t, s, "plain</td>")
	assert.Contains(t, s, "2:4</td>")
	assert.Contains(t, s, `<svg id="hist0"`)
	assert.NotContains(t, s, "<script")

	pages := filepath.Join(dir, "pages")
	require.NoError(t, os.Mkdir(pages, 0o755))
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"report", irisFixture, a}, 2, "-o is required"},
		{[]string{"report", "-o", filepath.Join(dir, "x.html"), irisFixture}, 2, "want ORIG and at least one CONVERTED"},
		{[]string{"report", "-o", filepath.Join(dir, "x.html"), "-label", "a,b", irisFixture, a}, 2, "-label gives 2 names for 1 converted checkpoint"},
		{[]string{"report", "-o", both, irisFixture, a}, 1, "already exists; pass -force to replace it, or choose another output"},
		{[]string{"report", "-o", filepath.Join(a, "r.html"), irisFixture, a}, 1, "inside the input directory"},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "c"), "-report", filepath.Join(dir, "c", "r.html")}, 2, "outside the output"},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "c"), "-report", one}, 1, "already exists; pass -force to replace it, or choose another output"},
		{[]string{"report", "-force", "-o", pages, irisFixture, a}, 1, "is a directory, and the report is one HTML file: name the file, e.g. " + filepath.Join(pages, "report.html")},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "c"), "-force", "-report", dir}, 1, "is a directory, and the report is one HTML file"},
		// A report is an HTML page: never written over a file of another kind, -force or not.
		{[]string{"report", "-force", "-o", filepath.Join(dir, "r.safetensors"), irisFixture, a}, 2,
			"the report is an HTML page: name a .html file, e.g. " + filepath.Join(dir, "r.html")},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "c"), "-force", "-report", a + ".safetensors"}, 2,
			"the report is an HTML page"},
	} {
		code, _, stderr := tcast(c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.msg, c.args)
	}
	_, err = os.Stat(filepath.Join(dir, "c"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused -report converts nothing")
	code, _, stderr = tcast("report", "-force", "-o", both, irisFixture, a)
	assert.Equal(t, 0, code, stderr)
}
