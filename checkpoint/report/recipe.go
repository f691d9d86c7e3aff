package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

// buildRecipe compares one converted checkpoint with the source.
func buildRecipe(orig, conv string, o Options) (*Recipe, error) {
	c, err := openConverted(conv)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	hists := map[string]*Histogram{}
	vr, err := verify.Checkpoints(orig, conv, verify.Options{
		Imatrix: o.Imatrix,
		Observe: func(r *verify.Result, want, got []float32) {
			if r.Converted {
				hists[r.Name] = newHistogram(want, got)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	base := filepath.Base(conv)
	rec := &Recipe{Label: strings.TrimSuffix(base, filepath.Ext(base)), Path: conv, Layout: c.Layout(),
		ScaleSearch: c.Metadata()[layout.KeyScaleSearch] == layout.ScaleSearchOn, Unmatched: vr.Unmatched}
	for _, v := range vr.Tensors {
		t, err := c.tensor(v, hists[v.Name])
		if err != nil {
			return nil, err
		}
		rec.Tensors = append(rec.Tensors, t)
	}
	rec.sum()
	rec.WeightedSQNR, _ = vr.WeightedSQNR()
	return rec, nil
}

// converted is a converted checkpoint, with what its conversion recorded.
type converted struct {
	*load.Checkpoint
	weights  map[string]load.Weight // its converted weights
	convName map[string]string      // source name → its name, for the renamed tensors
	rotated  map[string]layout.Rotated
}

// openConverted opens the converted checkpoint conv.
func openConverted(conv string) (*converted, error) {
	lc, err := load.Open(conv)
	if err != nil {
		return nil, err
	}
	c := &converted{Checkpoint: lc, weights: map[string]load.Weight{}, convName: map[string]string{}}
	if err := c.readRecords(); err != nil {
		lc.Close()
		return nil, err
	}
	return c, nil
}

// readRecords reads the checkpoint's converted weights, renames and
// rotations.
func (c *converted) readRecords() error {
	ins, err := load.Inspect(c.Checkpoint, load.InspectOptions{})
	if err != nil {
		return err
	}
	for _, w := range ins.Converted {
		c.weights[w.Name] = w
	}
	if js, ok := c.Metadata()[layout.KeyRenamed]; ok {
		var renamed map[string]string
		if err := json.Unmarshal([]byte(js), &renamed); err != nil {
			return fmt.Errorf("%s: metadata %s: %w", c.Path(), layout.KeyRenamed, err)
		}
		for n, src := range renamed {
			c.convName[src] = n
		}
	}
	if c.rotated, err = layout.ReadRotated(c.Metadata()); err != nil {
		return fmt.Errorf("%s: %w", c.Path(), err)
	}
	return nil
}

// tensor returns the recipe's tensor of verify's result v, with its
// histogram h, its rotation and its keep mask.
func (c *converted) tensor(v verify.Result, h *Histogram) (Tensor, error) {
	name := v.Name
	if n, ok := c.convName[name]; ok {
		name = n
	}
	t := Tensor{Name: v.Name, Shape: v.Shape, Layer: layerOf(v.Name), DataType: v.DataType, Converted: v.Converted,
		Bits: v.Bits, SQNR: v.SQNR, MaxAbsErr: v.MaxAbsErr, Lost: v.Lost, WeightedSQNR: v.WeightedSQNR, Errors: h}
	if v.Lost > 0 { // the error is not finite: no weighted figure either
		t.WeightedSQNR = nil
	}
	if rot, ok := c.rotated[name]; ok {
		t.Rotation = rot.Rotation.String()
		t.SQNRUnrotated, t.HasUnrotated = rot.SQNRUnrotated, rot.HasUnrotated
	}
	if w, ok := c.weights[name]; !ok || w.Density == nil {
		return t, nil
	}
	tt, err := c.Tensor(name)
	if err != nil {
		return t, err
	}
	if tt.Mask != nil {
		g := sparsity.DensityMap(tt.Mask, sparsity.PictureOptions{MaxRows: 48, MaxCols: 96})
		t.Mask = &g
	}
	return t, nil
}

// sum sets the recipe's datatypes, rotations and means from its tensors.
func (rec *Recipe) sum() {
	var dts, rots []string
	var sq, usq measure.MeanSQNR
	unrotated := 0   // rotated tensors
	recorded := true // every rotated tensor's record gives its SQNR without rotation
	var bits float64
	var elements int64
	for _, t := range rec.Tensors {
		if t.Rotation != "" && !slices.Contains(rots, t.Rotation) {
			rots = append(rots, t.Rotation)
		}
		if !t.Converted {
			continue
		}
		if !slices.Contains(dts, t.DataType) {
			dts = append(dts, t.DataType)
		}
		n := measure.Elements(t.Shape)
		bits += t.Bits * float64(n)
		elements += n
		sq.Add(t.SQNR, n)
		if u, ok := t.Unrotated(); ok {
			usq.Add(u, n)
		} else {
			recorded = false
		}
		if t.Rotation != "" {
			unrotated++
		}
	}
	rec.DataType, rec.Rotation = strings.Join(dts, ", "), strings.Join(rots, ", ")
	if elements > 0 {
		rec.Bits = bits / float64(elements)
	}
	rec.SQNR = sq.Mean()
	if unrotated > 0 && recorded {
		rec.SQNRUnrotated, rec.HasUnrotated = usq.Mean(), true
	}
}
