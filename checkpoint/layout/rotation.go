package layout

import (
	"encoding/json"
	"fmt"

	"github.com/tensorcast-go/tensorcast/rotate"
)

// RotationInfo is how a rotated weight is recorded under KeyRotated: the
// rotation ("hadamard:32", as rotate.Parse reads it) and the axis index it
// runs along, in the orientation the weight is stored in (its scaled axis).
type RotationInfo struct {
	Rotation string `json:"rotation"`
	Axis     int    `json:"axis"`
}

// Rotator is implemented by layouts whose metadata records a rotation of
// the weights (KeyRotated), which package load then undoes; other layouts'
// readers would take the rotated values for the weights.
type Rotator interface {
	RecordsRotation() bool
}

// RecordsRotation reports whether layout l records rotated weights.
func RecordsRotation(l Layout) bool {
	r, ok := l.(Rotator)
	return ok && r.RecordsRotation()
}

// RecordsRotation reports that the tcast layout records rotations.
func (tcastLayout) RecordsRotation() bool { return true }

// ReadRotated returns the rotated weights metadata records under
// KeyRotated (nil when there are none), each rotation parsed and checked.
func ReadRotated(meta map[string]string) (map[string]Rotated, error) {
	js, ok := meta[KeyRotated]
	if !ok {
		return nil, nil
	}
	var infos map[string]RotationInfo
	if err := json.Unmarshal([]byte(js), &infos); err != nil {
		return nil, fmt.Errorf("metadata %s: %w", KeyRotated, err)
	}
	out := make(map[string]Rotated, len(infos))
	for w, info := range infos {
		r, err := rotate.Parse(info.Rotation)
		if err == nil && (r.IsZero() || r.Block == 0) {
			err = fmt.Errorf("%q names no block", info.Rotation)
		}
		if err != nil {
			return nil, &FormatError{Layout: "tcast", Weight: w, Msg: fmt.Sprintf("metadata %s", KeyRotated), Err: err}
		}
		out[w] = Rotated{Rotation: r, Axis: info.Axis}
	}
	return out, nil
}

// Rotated is a parsed RotationInfo.
type Rotated struct {
	Rotation rotate.Rotation
	Axis     int
}
