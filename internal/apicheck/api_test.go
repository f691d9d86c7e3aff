package apicheck

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/golden"
)

var update = flag.Bool("update", false, "rewrite api/tensorcast.txt from the source")

const module = "github.com/tensorcast-go/tensorcast"

// root is the module's directory.
const root = "../.."

// TestAPI keeps the exported API of every package in api/tensorcast.txt:
// growing, shrinking or changing it is a change of that file, reviewed
// with the code. go test ./internal/apicheck -update rewrites it.
func TestAPI(t *testing.T) {
	pkgs, err := Load(root)
	require.NoError(t, err)
	got := strings.Join(API(pkgs), "\n") + "\n"
	goldenPath := filepath.Join(root, "api", "tensorcast.txt")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(goldenPath), 0o755))
		require.NoError(t, os.WriteFile(goldenPath, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	if string(want) != got {
		t.Errorf("the exported API differs from api/tensorcast.txt (go test ./internal/apicheck -update "+
			"rewrites it):\n%s", golden.Diff(string(want), got))
	}
}

// TestExportedNamesAreUsed keeps every exported package-level name of the
// module either used outside its package or documented API with an
// Example, so that the public surface holds only what a user calls.
func TestExportedNamesAreUsed(t *testing.T) {
	pkgs, err := Load(root)
	require.NoError(t, err)
	users, err := Users(root)
	require.NoError(t, err)
	unused := Unused(pkgs, module, users)
	assert.Empty(t, unused, "these exported names have no caller outside their package and no "+
		"Example: unexport (or delete) each one that is an internal detail, or show the API a "+
		"user calls in an Example (with an // Output: comment) in a _test.go file of its package:\n%s",
		strings.Join(unused, "\n"))
}

// Unused and API on a small module written here: what is used from
// another package, named or called by an Example, or mentioned by a used
// declaration is kept; the rest is reported. An alias of an internal
// package's type lists that type's exported fields and methods; the
// internal package itself is not listed.
func TestUnusedAndAPIOfAModule(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	write("a/a.go", `package a

// Used is called by b.
func Used(o Opts) Result { return Result{} }

// Opts is a used function's parameter; Result its result, whose field's
// type Kind is reachable too.
type Opts struct{ N int }
type Result struct{ K Kind }
type Kind int

// KindOne is a constant of a used type.
const KindOne Kind = 1

// Shown appears in an Example's body; Named is what an Example is named after.
func Shown() {}
func Named() {}

// Lonely is used by nothing.
func Lonely() {}
var ErrLonely error
type T struct{ Field int; hidden int }
func (T) Method(x int) error { return nil }
func (T) hidden() {}
`)
	write("a/alias.go", `package a

import "example.com/m/internal/e"

// Alias makes the internal type public.
type Alias = e.E
`)
	write("internal/e/e.go", `package e

// E is public through a.Alias.
type E struct {
	Field int
	K     Kind
	hidden int
}

// Kind is E's field's type.
type Kind int

func (x *E) Error() string { return "" }
func (x E) With(k Kind) *E { return nil }
func (E) hidden() {}
`)
	write("a/example_test.go", `package a_test

import "example.com/m/a"

func ExampleNamed() { a.Shown() }
`)
	write("b/b.go", `package b

import "example.com/m/a"

var _ = a.Used
var _ a.Alias
`)
	pkgs, err := Load(dir)
	require.NoError(t, err)
	users, err := Users(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.ErrLonely", "a.Lonely", "a.T"}, Unused(pkgs, "example.com/m", users))
	api := API(pkgs)
	assert.Contains(t, api, "pkg a, func Used(o Opts) Result")
	assert.Contains(t, api, "pkg a, type T struct, Field int")
	assert.Contains(t, api, "pkg a, method (T) Method(x int) error")
	assert.Contains(t, api, "pkg a, const KindOne Kind")
	assert.Contains(t, api, "pkg a, var ErrLonely error")
	assert.NotContains(t, strings.Join(api, "\n"), "hidden")
	assert.Contains(t, api, "pkg a, type Alias = e.E")
	assert.Contains(t, api, "pkg a, type Alias struct, Field int")
	assert.Contains(t, api, "pkg a, type Alias struct, K e.Kind")
	assert.Contains(t, api, "pkg a, method (*Alias) Error() string")
	assert.Contains(t, api, "pkg a, method (Alias) With(k e.Kind) *e.E")
	for _, l := range api {
		assert.False(t, strings.HasPrefix(l, "pkg internal/"), "an internal package is listed: %s", l)
	}
}
