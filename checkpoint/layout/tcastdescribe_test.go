package layout

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTcastDescribeChecksStoredSizes: Describe, which gives the shape a
// converter plans its output with, refuses a tcast.weight record whose
// shape the stored tensors cannot hold (2^30 times the rows, the parts'
// shapes claimed alike, or the logical shape alone), without reading the
// tensors, as Decode does; the honest record describes.
func TestTcastDescribeChecksStoredSizes(t *testing.T) {
	const name = "w"
	for _, dt := range []string{"mxfp4", "nvfp4", "int4_g32", "fp8e4_channel"} {
		t.Run(dt, func(t *testing.T) {
			l, err := Get("tcast")
			require.NoError(t, err)
			c := ldrCast(t, dt, ldrRandom(1, 64*64), []int{64, 64})
			meta := map[string]string{}
			ts, err := l.Encode(name, c, meta)
			require.NoError(t, err)
			d := l.(Describer)

			gotDT, shape, err := d.Describe(name, newLdrSource(ts, meta))
			require.NoError(t, err)
			assert.Equal(t, []int{64, 64}, shape)
			assert.Equal(t, c.DataType.Code(), gotDT.Code())

			for _, lie := range []struct {
				what  string
				parts bool
			}{{"shape and parts", true}, {"shape alone", false}} {
				var info WeightInfo
				require.NoError(t, json.Unmarshal([]byte(meta[KeyWeightPrefix+name]), &info))
				rows := info.Shape[0]
				info.Shape[0] = rows << 30
				if lie.parts {
					for pn, p := range info.Parts {
						if len(p.Shape) > 0 && p.Shape[0] == rows {
							p.Shape[0] = rows << 30
						}
						info.Parts[pn] = p
					}
				}
				rec, err := json.Marshal(info)
				require.NoError(t, err)
				lied := map[string]string{}
				for k, v := range meta {
					lied[k] = v
				}
				lied[KeyWeightPrefix+name] = string(rec)
				src := newLdrSource(ts, lied)
				_, _, err = d.Describe(name, src)
				var fe *FormatError
				require.ErrorAs(t, err, &fe, lie.what)
				assert.Equal(t, name, fe.Weight, lie.what)
				_, _, err = l.Decode(name, src)
				require.ErrorAs(t, err, &fe, lie.what)
			}
		})
	}
}
