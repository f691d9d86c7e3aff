package scale

import (
	"errors"
	"fmt"
	"github.com/tensorcast-go/tensorcast/internal/names"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/tensorcast-go/tensorcast/dtype"
)

// Tile is one tile segment of a scale spec.
type Tile struct {
	Size   int // elements per tile along its dimension; 0 = the whole dimension (channel scaling)
	Sub    int // subtile size; 0 when there are no subtiles
	Offset int // subtile exponent-offset bits (0, 1 or 2); nonzero only with Sub
}

// Spec is a parsed scale spec with explicit roles.
type Spec struct {
	Scale       *dtype.Format // the (block) scale format; always set
	Zero        *dtype.Format // zero-point format, nil when absent
	TensorScale *dtype.Format // second-level per-tensor scale, nil when absent
	// Tiles: none: one scale for the whole tensor; one: 1-D tile along the scaled
	// axis; two: 2-D tile, Tiles[0] on the dimension before the scaled axis,
	// Tiles[1] on the scaled axis.
	Tiles            []Tile
	SparseN, SparseM int // N:M structured sparsity inside the last tile; 0, 0 when absent
}

// ParseError reports a scale spec that does not follow the grammar or breaks one of
// its checks (see the package documentation).
type ParseError struct {
	Spec   string // the spec as given
	Reason string // what is wrong: the offending segment and what was expected
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("scale: bad spec %q: %s", e.Spec, e.Reason)
}

// Limits of the grammar.
const (
	maxNumberSpecs = 3
	maxTiles       = 2
	maxTileSize    = 1024
	// specMaxNameTokens bounds how many "_"-separated tokens one number-format name
	// may span (dtype's longest names, such as float8_e4m3b11fnuz, span two).
	specMaxNameTokens = 4
	// specMaxDigits bounds the digits of a number in a tile segment; longer numbers
	// are out of range anyway and must not overflow int.
	specMaxDigits = 9
)

var (
	specTileRE      = regexp.MustCompile(`^t(\d*)(?:s(\d+))?(?:o(\d+))?(?:n(\d+)m(\d+))?$`)
	specTileStartRE = regexp.MustCompile(`^t(?:$|\d|[son]\d)`)
)

// Parse parses a scale spec such as "e8m0_t32", "float16_int8_t16n2m4" or
// "multi_ue4m3_float32_t16". The grammar, the roles of the number specs and the
// checks are described in the package documentation. Errors are *ParseError.
func Parse(s string) (*Spec, error) {
	sp, reason := parseSpec(s)
	if reason != "" {
		return nil, &ParseError{Spec: s, Reason: reason}
	}
	return sp, nil
}

// MustParse is Parse for specs known to be valid, such as those in package-level
// tables; it panics on error.
func MustParse(s string) *Spec {
	sp, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return sp
}

// maxSpecLen bounds the input Parse works on; real specs are a few dozen
// characters, and the longest-name search would be slow on huge inputs.
const maxSpecLen = 200

// parseSpec does the work of Parse; a non-empty reason is an error.
func parseSpec(s string) (*Spec, string) {
	toks, multi, reason := specTokens(s)
	if reason != "" {
		return nil, reason
	}
	// Number specs: everything before the first tile token.
	nt := len(toks)
	for i, t := range toks {
		if isTileToken(t) {
			nt = i
			break
		}
	}
	if nt == 0 {
		return nil, fmt.Sprintf("segment %q: a tile segment needs a number spec before it", toks[0])
	}
	nums, reason := parseNumberSpecs(toks[:nt])
	if reason != "" {
		return nil, reason
	}
	sp := &Spec{}
	if reason := sp.parseTiles(toks[nt:]); reason != "" {
		return nil, reason
	}
	if reason := sp.setRoles(nums, multi); reason != "" {
		return nil, reason
	}
	if reason := sp.checkRoles(); reason != "" {
		return nil, reason
	}
	return sp, ""
}

// specTokens splits spec s, lower-cased and trimmed, into its segments
// (separated by "_") after a "multi_" prefix, which it reports.
func specTokens(s string) (toks []string, multi bool, reason string) {
	key := strings.ToLower(strings.TrimSpace(s))
	if key == "" {
		return nil, false, "empty spec"
	}
	if len(key) > maxSpecLen {
		return nil, false, fmt.Sprintf("%d characters, more than the %d any spec needs", len(key), maxSpecLen)
	}
	if strings.IndexFunc(key, unicode.IsSpace) >= 0 {
		return nil, false, "white space inside the spec"
	}
	if rest, ok := strings.CutPrefix(key, "multi_"); ok {
		multi = true
		key = rest
		if key == "" {
			return nil, false, `"multi_" with no number specs after it`
		}
	}
	toks = strings.Split(key, "_")
	for i, t := range toks {
		if t == "" {
			return nil, false, fmt.Sprintf("empty segment %d (doubled, leading or trailing \"_\")", i+1)
		}
	}
	return toks, multi, ""
}

// parseNumberSpecs parses toks, the segments before the tiles, as at most
// maxNumberSpecs number specs.
func parseNumberSpecs(toks []string) ([]*dtype.Format, string) {
	var nums []*dtype.Format
	for i := 0; i < len(toks); {
		f, j, reason := parseNumberSpec(toks[i:])
		if reason != "" {
			return nil, reason
		}
		if len(nums) == maxNumberSpecs {
			return nil, fmt.Sprintf("segment %q: more than %d number specs", strings.Join(toks[i:i+j], "_"), maxNumberSpecs)
		}
		nums = append(nums, f)
		i += j
	}
	return nums, ""
}

// parseTiles parses the tile segments toks into s.Tiles, with the sparsity
// of the last one.
func (s *Spec) parseTiles(toks []string) string {
	for k, t := range toks {
		if !isTileToken(t) {
			return fmt.Sprintf("segment %q after a tile segment: number specs come before tiles, and a tile is t[<T>][s<S>][o<O>][n<N>m<M>]", t)
		}
		if k == maxTiles {
			return fmt.Sprintf("segment %q: more than %d tile segments", t, maxTiles)
		}
		tile, n, m, reason := parseTile(t)
		if reason != "" {
			return fmt.Sprintf("segment %q: %s", t, reason)
		}
		if m != 0 {
			if k != len(toks)-1 {
				return fmt.Sprintf("segment %q: sparsity n%dm%d is allowed on the last tile segment only", t, n, m)
			}
			s.SparseN, s.SparseM = n, m
		}
		s.Tiles = append(s.Tiles, tile)
	}
	if len(s.Tiles) == 2 && s.Tiles[0].Size == 0 && s.Tiles[1].Size == 0 {
		return fmt.Sprintf("segments %q: both tiles are channel (t0), which is the whole tensor; write no tile segment for one scale per tensor",
			strings.Join(toks, "_"))
	}
	return ""
}

// setRoles gives the number specs nums their roles: scale, zero point and
// tensor scale, in the order of a "multi_" spec when multi is set.
func (s *Spec) setRoles(nums []*dtype.Format, multi bool) string {
	switch {
	case multi && len(nums) < 2:
		return fmt.Sprintf(`"multi_" needs at least two number specs (scale and tensor scale), got %d`, len(nums))
	case multi:
		s.Scale, s.TensorScale = nums[0], nums[len(nums)-1]
		if len(nums) == 3 {
			s.Zero = nums[1]
		}
	case len(nums) == 3:
		s.TensorScale, s.Scale, s.Zero = nums[0], nums[1], nums[2]
	default:
		s.Scale = nums[0]
		if len(nums) == 2 {
			s.Zero = nums[1]
		}
	}
	return ""
}

// checkRoles checks the kinds of the formats against their roles and the tiles.
func (s *Spec) checkRoles() string {
	if ts := s.TensorScale; ts != nil {
		if len(s.Tiles) == 0 {
			return fmt.Sprintf("tensor scale %q needs at least one tile segment (a block scale under it)", ts.Name())
		}
		if ts.Kind() != dtype.Float {
			return fmt.Sprintf("tensor scale %q must be a float format, not %s", ts.Name(), ts.Kind())
		}
	}
	if z := s.Zero; z != nil {
		if s.Scale.Kind() != dtype.Float {
			return fmt.Sprintf("scale %q with a zero point must be a float format, not %s", s.Scale.Name(), s.Scale.Kind())
		}
		if z.Kind() == dtype.Exponent {
			return fmt.Sprintf("zero point %q must be a float or int format, not exponent", z.Name())
		}
	}
	for _, t := range s.Tiles {
		if t.Offset != 0 && s.Scale.Kind() != dtype.Exponent {
			return fmt.Sprintf("subtile offset o%d needs an exponent scale (such as e8m0), not %s %q", t.Offset, s.Scale.Kind(), s.Scale.Name())
		}
	}
	return ""
}

// isTileToken reports whether a segment starts the tile segments: "t" followed by
// nothing, a digit, or s, o or n and a digit.
func isTileToken(t string) bool { return specTileStartRE.MatchString(t) }

// parseNumberSpec parses the longest prefix of toks (joined with "_") that dtype
// accepts and returns the format and the number of tokens it spans.
func parseNumberSpec(toks []string) (*dtype.Format, int, string) {
	n := min(len(toks), specMaxNameTokens)
	for j := n; j >= 1; j-- {
		if f, err := dtype.Parse(strings.Join(toks[:j], "_")); err == nil {
			return f, j, ""
		}
	}
	// None parses: report the candidate with the closest suggestion (the longer on
	// a tie), else the single token.
	bestName, bestErr, bestD := toks[0], error(nil), -1
	for j := n; j >= 1; j-- {
		name := strings.Join(toks[:j], "_")
		_, err := dtype.Parse(name)
		if j == 1 && bestErr == nil {
			bestName, bestErr = name, err
		}
		var de *dtype.ParseError
		if errors.As(err, &de) && len(de.Closest) > 0 {
			if d := names.EditDistance(name, de.Closest[0]); bestD < 0 || d < bestD {
				bestName, bestErr, bestD = name, err, d
			}
		}
	}
	reason := bestErr.Error()
	var de *dtype.ParseError
	if errors.As(bestErr, &de) {
		reason = de.Reason
		if len(de.Closest) > 0 {
			reason += " (closest known: " + strings.Join(de.Closest, ", ") + ")"
		}
	}
	return nil, 0, fmt.Sprintf("segment %q: not a number format: %s", bestName, reason)
}

// parseTile parses one tile segment and checks its values; it returns the tile, the
// sparsity N and M (0 when absent) and a non-empty reason on error.
func parseTile(t string) (Tile, int, int, string) {
	m := specTileRE.FindStringSubmatch(t)
	if m == nil {
		return Tile{}, 0, 0, "expected t[<T>][s<S>][o<O>][n<N>m<M>] with decimal numbers, in that order"
	}
	for _, d := range m[1:] {
		if len(d) > specMaxDigits {
			return Tile{}, 0, 0, fmt.Sprintf("number %s out of range", d)
		}
	}
	num := func(d string) int { v, _ := strconv.Atoi(d); return v } // "" → 0
	tile := Tile{Size: num(m[1]), Sub: num(m[2]), Offset: num(m[3])}
	hasSub, hasOff, hasSparse := m[2] != "", m[3] != "", m[5] != ""
	n, mm := num(m[4]), num(m[5])

	if tile.Size != 0 && (!isPow2(tile.Size) || tile.Size < 2 || tile.Size > maxTileSize) {
		return Tile{}, 0, 0, fmt.Sprintf("tile size %d is not 0 or a power of two in 2..%d", tile.Size, maxTileSize)
	}
	if hasSub {
		switch {
		case tile.Sub < 2 || !isPow2(tile.Sub):
			return Tile{}, 0, 0, fmt.Sprintf("subtile size %d is not a power of two >= 2", tile.Sub)
		case tile.Size != 0 && tile.Size%tile.Sub != 0:
			return Tile{}, 0, 0, fmt.Sprintf("subtile size %d does not divide tile size %d", tile.Sub, tile.Size)
		}
	}
	if hasOff {
		switch {
		case tile.Offset != 1 && tile.Offset != 2:
			return Tile{}, 0, 0, fmt.Sprintf("subtile offset bits %d is not 1 or 2", tile.Offset)
		case !hasSub:
			return Tile{}, 0, 0, fmt.Sprintf("subtile offset o%d needs a subtile size s<S> before it", tile.Offset)
		}
	}
	if hasSparse {
		switch {
		case mm != 2 && mm != 4 && mm != 8 && mm != 16:
			return Tile{}, 0, 0, fmt.Sprintf("sparsity M=%d is not 2, 4, 8 or 16", mm)
		case n < 1 || n >= mm:
			return Tile{}, 0, 0, fmt.Sprintf("sparsity N=%d is not in 1..%d (1 <= N < M)", n, mm-1)
		case hasSub && tile.Sub%mm != 0:
			return Tile{}, 0, 0, fmt.Sprintf("sparsity M=%d does not divide subtile size %d", mm, tile.Sub)
		case tile.Size != 0 && tile.Size%mm != 0:
			return Tile{}, 0, 0, fmt.Sprintf("sparsity M=%d does not divide tile size %d", mm, tile.Size)
		}
	}
	return tile, n, mm, ""
}

func isPow2(v int) bool { return v > 0 && v&(v-1) == 0 }

// String returns the canonical spelling of s: "multi_" when there is a tensor
// scale, the canonical dtype names in the order Parse reads them back (Scale, Zero,
// TensorScale with "multi_"; Scale, Zero without), then the tiles as
// t<T>[s<S>][o<O>][n<N>m<M>], a channel tile as "t0". Parse(s.String()) gives back
// a Spec equal to s for every Spec that Parse returns.
func (s *Spec) String() string {
	var b strings.Builder
	name := func(f *dtype.Format) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
		if f == nil {
			b.WriteString("<nil>")
			return
		}
		b.WriteString(f.Name())
	}
	if s.TensorScale != nil {
		b.WriteString("multi_")
	}
	name(s.Scale)
	if s.Zero != nil {
		name(s.Zero)
	}
	if s.TensorScale != nil {
		name(s.TensorScale)
	}
	for i, t := range s.Tiles {
		fmt.Fprintf(&b, "_t%d", t.Size)
		if t.Sub != 0 {
			fmt.Fprintf(&b, "s%d", t.Sub)
		}
		if t.Offset != 0 {
			fmt.Fprintf(&b, "o%d", t.Offset)
		}
		if i == len(s.Tiles)-1 && s.SparseM != 0 {
			fmt.Fprintf(&b, "n%dm%d", s.SparseN, s.SparseM)
		}
	}
	return b.String()
}

// IsTensor reports one scale for the whole tensor (no tile segment).
func (s *Spec) IsTensor() bool { return len(s.Tiles) == 0 }

// IsChannel reports a channel tile: some tile spans its whole dimension (Size 0).
func (s *Spec) IsChannel() bool {
	for _, t := range s.Tiles {
		if t.Size == 0 {
			return true
		}
	}
	return false
}

// IsTile reports tile (block) scaling: some tile has a fixed Size. A 2-D tile with
// one channel dimension is both a tile and a channel spec.
func (s *Spec) IsTile() bool {
	for _, t := range s.Tiles {
		if t.Size != 0 {
			return true
		}
	}
	return false
}

// Is2D reports a 2-D tile (two tile segments).
func (s *Spec) Is2D() bool { return len(s.Tiles) == 2 }

// IsSubtile reports that some tile is split into subtiles (Sub set).
func (s *Spec) IsSubtile() bool {
	for _, t := range s.Tiles {
		if t.Sub != 0 {
			return true
		}
	}
	return false
}

// IsSparse reports N:M structured sparsity inside the last tile.
func (s *Spec) IsSparse() bool { return s.SparseM != 0 }

// IsMultiscale reports a second-level per-tensor scale over the block scales.
func (s *Spec) IsMultiscale() bool { return s.TensorScale != nil }

// IsExponent reports a power-of-two scale format (such as e8m0).
func (s *Spec) IsExponent() bool { return s.Scale != nil && s.Scale.Kind() == dtype.Exponent }

// IsZeroFloat reports a zero point in a float format (rather than an integer one).
func (s *Spec) IsZeroFloat() bool { return s.Zero != nil && s.Zero.Kind() == dtype.Float }
