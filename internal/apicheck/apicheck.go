// Package apicheck lists the exported API of the module's packages, as the
// Go project's api/ check does, so that a change of the public surface is
// a reviewed change of a golden file (api/tensorcast.txt), and finds the
// exported names that nothing outside their package uses and no Example
// documents.
//
// It reads source with go/parser alone: a declaration is printed as it is
// written (signatures, struct fields, constants with their types), one line
// each, sorted. A type alias of an internal package's type also lists that
// type's exported fields and methods under the alias's name.
package apicheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A Package is one package of the module: its import path relative to the
// module (".../checkpoint/gguf" is "checkpoint/gguf") and its parsed files.
type Package struct {
	Path  string
	Name  string
	Files []*ast.File // non-test files
	Tests []*ast.File // _test.go files of the package and of its _test package
	fset  *token.FileSet
	// internal holds the module's internal packages by path, in which
	// the type aliases of the package are resolved.
	internal map[string]*Package
}

// Load parses every package below root, the module's directory, except
// cmd, testdata and underscore directories. Internal packages are parsed
// too, so that an alias of one of their types lists what the alias makes
// public, but they are not listed.
func Load(root string) ([]*Package, error) {
	var pkgs []*Package
	internal := map[string]*Package{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if p != root && (name == "testdata" || name == "cmd" ||
			strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		pkg, err := parseDir(fset, root, p)
		switch {
		case err != nil || pkg == nil:
		case isInternal(pkg.Path):
			internal[pkg.Path] = pkg
		default:
			pkgs = append(pkgs, pkg)
		}
		return err
	})
	for _, p := range pkgs {
		p.internal = internal
	}
	return pkgs, err
}

// isInternal reports whether a package path has an internal element.
func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// parseDir parses the Go files of one directory, nil when it has none.
func parseDir(fset *token.FileSet, root, dir string) (*Package, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, dir)
	pkg := &Package{Path: filepath.ToSlash(rel), fset: fset}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(e.Name(), "_test.go") {
			pkg.Tests = append(pkg.Tests, f)
			continue
		}
		pkg.Files = append(pkg.Files, f)
		pkg.Name = f.Name.Name
	}
	if len(pkg.Files) == 0 {
		return nil, nil
	}
	return pkg, nil
}

// API returns the lines of the exported API of pkgs, sorted: "pkg PATH,
// func Name(...) ...", "pkg PATH, type T struct, Field int", "pkg PATH,
// method (*T) M() error", "pkg PATH, const C = 1" and so on.
func API(pkgs []*Package) []string {
	var lines []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				for _, l := range p.declLines(f, d) {
					lines = append(lines, "pkg "+p.Path+", "+l)
				}
			}
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// declLines returns the API lines of one declaration of file f.
func (p *Package) declLines(f *ast.File, d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return p.funcLines(d)
	case *ast.GenDecl:
		var out []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, p.typeLines(f, s)...)
			case *ast.ValueSpec:
				out = append(out, p.valueLines(d.Tok, s)...)
			}
		}
		return out
	}
	return nil
}

// funcLines is the line of an exported function, or of an exported method
// of an exported type.
func (p *Package) funcLines(d *ast.FuncDecl) []string {
	if !d.Name.IsExported() {
		return nil
	}
	sig := p.node(&ast.FuncType{TypeParams: d.Type.TypeParams, Params: d.Type.Params, Results: d.Type.Results})
	sig = strings.TrimPrefix(sig, "func")
	if d.Recv == nil {
		return []string{"func " + d.Name.Name + sig}
	}
	recv := p.node(d.Recv.List[0].Type)
	if !ast.IsExported(strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")) {
		return nil
	}
	return []string{"method (" + recv + ") " + d.Name.Name + sig}
}

// typeLines are the lines of an exported type of file f: the type, and
// its exported fields or interface methods. An alias of an internal
// package's type also lists that type's fields and methods, under the
// alias's name: they are public through it.
func (p *Package) typeLines(f *ast.File, s *ast.TypeSpec) []string {
	if !s.Name.IsExported() {
		return nil
	}
	name := s.Name.Name
	if s.Assign.IsValid() {
		return append([]string{"type " + name + " = " + p.node(s.Type)}, p.aliasLines(f, name, s.Type)...)
	}
	return p.memberLines(name, s.Type, p.node)
}

// memberLines are the lines of type name defined as t: the type and its
// exported fields or interface methods, their types printed by print.
func (p *Package) memberLines(name string, t ast.Expr, print func(ast.Node) string) []string {
	switch t := t.(type) {
	case *ast.StructType:
		out := []string{"type " + name + " struct"}
		for _, f := range t.Fields.List {
			typ := print(f.Type)
			if len(f.Names) == 0 { // embedded
				out = append(out, "type "+name+" struct, embedded "+typ)
			}
			for _, n := range f.Names {
				if n.IsExported() {
					out = append(out, "type "+name+" struct, "+n.Name+" "+typ)
				}
			}
		}
		return out
	case *ast.InterfaceType:
		out := []string{"type " + name + " interface"}
		for _, m := range t.Methods.List {
			for _, n := range m.Names {
				if n.IsExported() {
					out = append(out, "type "+name+" interface, "+n.Name+
						strings.TrimPrefix(print(m.Type), "func"))
				}
			}
			if len(m.Names) == 0 {
				out = append(out, "type "+name+" interface, "+print(m.Type))
			}
		}
		return out
	}
	return []string{"type " + name + " " + print(t)}
}

// aliasLines are the lines an alias name = t of file f adds when t is a
// type of one of the module's internal packages: the type's exported
// fields or interface methods and its exported methods, as if declared
// under name, with the internal package's own types qualified by its
// name. The alias's line itself is the caller's.
func (p *Package) aliasLines(f *ast.File, name string, t ast.Expr) []string {
	sel, ok := t.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return nil
	}
	ip := p.internalPackage(f, x.Name)
	if ip == nil {
		return nil
	}
	print := func(n ast.Node) string { return ip.qualified(n, x.Name) }
	var out []string
	for _, file := range ip.Files {
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == sel.Sel.Name && !ts.Assign.IsValid() {
						out = append(out, ip.memberLines(name, ts.Type, print)[1:]...)
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || !d.Name.IsExported() {
					continue
				}
				recv := ip.node(d.Recv.List[0].Type)
				if strings.TrimLeft(recv, "*") != sel.Sel.Name {
					continue
				}
				star := strings.TrimSuffix(recv, sel.Sel.Name)
				sig := print(&ast.FuncType{Params: d.Type.Params, Results: d.Type.Results})
				out = append(out, "method ("+star+name+") "+d.Name.Name+strings.TrimPrefix(sig, "func"))
			}
		}
	}
	return out
}

// internalPackage returns the internal package that file f imports as
// local, or nil when local names no internal package of the module.
func (p *Package) internalPackage(f *ast.File, local string) *Package {
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, `"`)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		if name != local {
			continue
		}
		for rel, ip := range p.internal {
			if strings.HasSuffix(path, "/"+rel) {
				return ip
			}
		}
	}
	return nil
}

// qualified prints n on one line as a client of p sees it: the names of
// p's own types in it (not those of the fields and parameters) written
// local.Name.
func (p *Package) qualified(n ast.Node, local string) string {
	types := map[string]bool{}
	for _, f := range p.Files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				for _, s := range g.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						types[ts.Name.Name] = true
					}
				}
			}
		}
	}
	var renamed []*ast.Ident
	var visit func(ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr: // another package's name
			return false
		case *ast.Field: // its type only, not its names
			ast.Inspect(n.Type, visit)
			return false
		case *ast.Ident:
			if types[n.Name] {
				renamed = append(renamed, n)
			}
		}
		return true
	}
	ast.Inspect(n, visit)
	for _, id := range renamed {
		id.Name = local + "." + id.Name
	}
	s := p.node(n)
	for _, id := range renamed {
		id.Name = strings.TrimPrefix(id.Name, local+".")
	}
	return s
}

// valueLines are the lines of exported constants and variables, with
// their declared type when they have one.
func (p *Package) valueLines(tok token.Token, s *ast.ValueSpec) []string {
	var out []string
	for _, n := range s.Names {
		if !n.IsExported() {
			continue
		}
		l := strings.ToLower(tok.String()) + " " + n.Name
		if s.Type != nil {
			l += " " + p.node(s.Type)
		}
		out = append(out, l)
	}
	return out
}

// node prints an AST node on one line.
func (p *Package) node(n ast.Node) string {
	var b bytes.Buffer
	printer.Fprint(&b, p.fset, n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// Unused returns the exported package-level names of pkgs (functions,
// types, constants, variables) that nothing uses: no file of users (the
// module's non-test source, commands included) outside their package
// refers to them, no Example of their package names or calls them, and no
// exported declaration that is used mentions them (a type in a used
// function's signature counts). A constant or variable counts as used
// when its type is. The names are written "checkpoint/gguf.QuantizeQ4_K".
func Unused(pkgs []*Package, module string, users []*ast.File) []string {
	used := map[string]bool{}
	for _, f := range users {
		for path, names := range references(f, module) {
			for n := range names {
				used[path+"."+n] = true
			}
		}
	}
	for _, p := range pkgs {
		for n := range p.exampleNames(module) {
			used[p.Path+"."+n] = true
		}
	}
	reachable(pkgs, used)
	var out []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				for _, n := range topNames(d) {
					key := p.Path + "." + n.name
					if !used[key] && (n.typ == "" || !used[p.Path+"."+n.typ]) {
						out = append(out, key)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// reachable adds to used the names that the exported declarations of used
// names mention (the types of a function's parameters and results, of a
// type's fields and methods), until nothing more is added.
func reachable(pkgs []*Package, used map[string]bool) {
	type decl struct {
		key  string
		node ast.Node
	}
	var decls []decl
	byPath := map[string]*Package{}
	for _, p := range pkgs {
		byPath[p.Path] = p
		for _, f := range p.Files {
			for _, d := range f.Decls {
				for _, k := range declKeys(p, d) {
					decls = append(decls, decl{k.key, k.node})
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, d := range decls {
			if !used[d.key] {
				continue
			}
			path := d.key[:strings.LastIndex(d.key, ".")]
			ast.Inspect(d.node, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if ok && id.IsExported() && !used[path+"."+id.Name] {
					used[path+"."+id.Name] = true
					changed = true
				}
				return true
			})
		}
	}
}

// keyedNode is an exported declaration's part that uses other names, with
// the key of the name it belongs to.
type keyedNode struct {
	key  string
	node ast.Node
}

// declKeys returns the parts of d that mention other names: a function's
// or method's signature (under its name, or its receiver's type), a type's
// definition.
func declKeys(p *Package, d ast.Decl) []keyedNode {
	var out []keyedNode
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		key := d.Name.Name
		if d.Recv != nil {
			recv := p.node(d.Recv.List[0].Type)
			key = strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")
		}
		out = append(out, keyedNode{p.Path + "." + key, d.Type})
	case *ast.GenDecl:
		for _, s := range d.Specs {
			if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.IsExported() {
				out = append(out, keyedNode{p.Path + "." + ts.Name.Name, ts.Type})
			}
		}
	}
	return out
}

// topName is an exported package-level name, with the type it is declared
// with when it is a constant or variable of a named type of the package.
type topName struct{ name, typ string }

// topNames returns the exported package-level names d declares.
func topNames(d ast.Decl) []topName {
	var out []topName
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil && d.Name.IsExported() {
			out = append(out, topName{name: d.Name.Name})
		}
	case *ast.GenDecl:
		var typ string // carried down a const block, as iota's type is
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					out = append(out, topName{name: s.Name.Name})
				}
			case *ast.ValueSpec:
				if id, ok := s.Type.(*ast.Ident); ok {
					typ = id.Name
				} else if s.Type != nil || d.Tok != token.CONST {
					typ = ""
				}
				for _, n := range s.Names {
					if n.IsExported() {
						out = append(out, topName{name: n.Name, typ: typ})
					}
				}
			}
		}
	}
	return out
}

// exampleNames returns the names the Example functions of p document:
// the one an Example is named after (ExampleOpen documents Open,
// ExampleFile_Close documents File) and every name of p its body uses.
func (p *Package) exampleNames(module string) map[string]bool {
	out := map[string]bool{}
	for _, f := range p.Tests {
		refs := references(f, module)[p.Path]
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Example") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(fd.Name.Name, "Example"), "_")
			if name != "" {
				out[name] = true
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr: // p.Name in an external test package
					if refs[n.Sel.Name] {
						out[n.Sel.Name] = true
					}
				case *ast.Ident: // Name inside the package
					if f.Name.Name == p.Name && n.IsExported() {
						out[n.Name] = true
					}
				}
				return true
			})
		}
	}
	return out
}

// references returns, for each package of module that f imports, the
// names f refers to in it (pkg.Name).
func references(f *ast.File, module string) map[string]map[string]bool {
	local := map[string]string{} // the name f uses for an import → its path in the module
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, `"`)
		rel, ok := strings.CutPrefix(path, module+"/")
		if !ok {
			continue
		}
		name := rel[strings.LastIndex(rel, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		local[name] = rel
	}
	out := map[string]map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok {
			if path, ok := local[id.Name]; ok {
				if out[path] == nil {
					out[path] = map[string]bool{}
				}
				out[path][sel.Sel.Name] = true
			}
		}
		return true
	})
	return out
}

// Users parses the non-test Go files below root that may use the module's
// packages: every package's and every command's, internal ones included.
func Users(root string) ([]*ast.File, error) {
	var files []*ast.File
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("apicheck: %w", err)
		}
		files = append(files, f)
		return nil
	})
	return files, err
}
