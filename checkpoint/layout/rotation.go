package layout

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/tensorcast-go/tensorcast/rotate"
)

// RotationInfo is how a rotated weight is recorded under KeyRotated: the
// rotation ("hadamard:32", as rotate.Parse reads it), the axis index it
// runs along, in the orientation the weight is stored in (its scaled axis),
// and the SQNR in dB the same cast gives the weight without the rotation
// (nil: that cast is exact, or the weight all zeros).
//
// The SQNR was added later: records written before lack the key, which
// ReadRotated tells apart from a null (Rotated.HasUnrotated).
type RotationInfo struct {
	Rotation      string   `json:"rotation"`
	Axis          int      `json:"axis"`
	SQNRUnrotated *float64 `json:"sqnr_unrotated_db"`
}

// rotator is implemented by layouts whose metadata records a rotation of
// the weights (KeyRotated), which package load then undoes; other layouts'
// readers would take the rotated values for the weights.
type rotator interface {
	RecordsRotation() bool
}

// RecordsRotation reports whether layout l records rotated weights.
func RecordsRotation(l Layout) bool {
	r, ok := l.(rotator)
	return ok && r.RecordsRotation()
}

// RecordsRotation reports that the tcast layout records rotations.
func (tcastLayout) RecordsRotation() bool { return true }

// maxJSONNumber is the longest encoding/json writes a finite float64:
// "-0.0000012345678901234567" (a sign, "0.00000" and 17 digits).
const maxJSONNumber = 25

// EncodeRotated returns the KeyRotated value that records infos. An
// SQNRUnrotated that is not finite (JSON has no infinities) is written as
// null, as nil is.
func EncodeRotated(infos map[string]RotationInfo) string {
	out := make(map[string]RotationInfo, len(infos))
	for w, info := range infos {
		if s := info.SQNRUnrotated; s != nil && (math.IsInf(*s, 0) || math.IsNaN(*s)) {
			info.SQNRUnrotated = nil
		}
		out[w] = info
	}
	b, _ := json.Marshal(out) // strings, ints and finite float64s always marshal
	return string(b)
}

// DeclareRotated returns a KeyRotated value to declare before the weights
// are cast, when their SQNRs without rotation are not known yet: infos
// with every SQNRUnrotated null, followed by trailing spaces (which JSON
// readers ignore) as many as any finite SQNRs need. EncodeRotated of the
// same weights and rotations, with their SQNRs, is never longer, and
// escapes no more characters, so it can replace the declared value in a
// header of fixed length, padded with spaces to its length.
func DeclareRotated(infos map[string]RotationInfo) string {
	blank := make(map[string]RotationInfo, len(infos))
	for w, info := range infos {
		info.SQNRUnrotated = nil
		blank[w] = info
	}
	return EncodeRotated(blank) + strings.Repeat(" ", len(infos)*(maxJSONNumber-len("null")))
}

// ReadRotated returns the rotated weights metadata records under
// KeyRotated (nil when there are none), each rotation parsed and checked.
// Records written before the SQNR without rotation was recorded still
// read, with HasUnrotated false.
func ReadRotated(meta map[string]string) (map[string]Rotated, error) {
	js, ok := meta[KeyRotated]
	if !ok {
		return nil, nil
	}
	var infos map[string]struct {
		Rotation string          `json:"rotation"`
		Axis     int             `json:"axis"`
		SQNR     json.RawMessage `json:"sqnr_unrotated_db"` // nil when absent, "null" for null
	}
	if err := json.Unmarshal([]byte(js), &infos); err != nil {
		return nil, fmt.Errorf("metadata %s: %w", KeyRotated, err)
	}
	out := make(map[string]Rotated, len(infos))
	for w, info := range infos {
		bad := func(err error) error {
			return &FormatError{Layout: "tcast", Weight: w, Msg: fmt.Sprintf("metadata %s", KeyRotated), Err: err}
		}
		r, err := rotate.Parse(info.Rotation)
		if err == nil && (r.IsZero() || r.Block == 0) {
			err = fmt.Errorf("%q names no block", info.Rotation)
		}
		if err != nil {
			return nil, bad(err)
		}
		rot := Rotated{Rotation: r, Axis: info.Axis, HasUnrotated: info.SQNR != nil}
		if info.SQNR != nil {
			if err := json.Unmarshal(info.SQNR, &rot.SQNRUnrotated); err != nil {
				return nil, bad(fmt.Errorf("sqnr_unrotated_db: %w", err))
			}
		}
		out[w] = rot
	}
	return out, nil
}

// Rotated is a parsed RotationInfo.
type Rotated struct {
	Rotation rotate.Rotation
	Axis     int
	// SQNRUnrotated is the SQNR in dB the weight's cast gives without the
	// rotation; nil when that cast is exact, or the weight all zeros, or
	// the record does not say (HasUnrotated false).
	SQNRUnrotated *float64
	// HasUnrotated says that the record gives the SQNR without rotation
	// (a number or null); records written before it was recorded lack it.
	HasUnrotated bool
}
