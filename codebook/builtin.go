package codebook

import "sync"

// The built-in tables (docs/CODEBOOK.md §2 lists their values and where they
// come from). Each function returns the same immutable table every time.

// nf4Values are bitsandbytes' NF4 entries, code order = value order.
var nf4Values = []float32{
	-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
	-0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
	0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
	0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
}

// nf4Thresholds are the float32 constants of bitsandbytes' NF4 quantizer,
// which sends x to the upper entry when x > threshold.
var nf4Thresholds = []float32{
	-0.8480964004993439, -0.6106329262256622, -0.4599952697753906, -0.33967943489551544,
	-0.23460740596055984, -0.13791173323988914, -0.045525018125772476, 0.03979014977812767,
	0.1202552504837513, 0.2035212516784668, 0.2920137718319893, 0.3893125355243683,
	0.5016634166240692, 0.6427869200706482, 0.8614784181118011,
}

// fp4Raw are the magnitudes of bitsandbytes' FP4 codes 0–7 before the
// division by 12 (its code order is not value order).
var fp4Raw = []float32{0, 0.0625, 8, 12, 4, 6, 2, 3}

// fp4Thresholds are the float32 constants of bitsandbytes' FP4 quantizer on
// |x|, between the ascending magnitudes 0, 1/192, 1/6, 1/4, 1/3, 1/2, 2/3, 1.
var fp4Thresholds = []float32{0.00260417, 0.0859375, 0.20833333, 0.29166667, 0.4166667, 0.583333, 0.8333333}

// iq4nlValues are ggml's kvalues_iq4nl.
var iq4nlValues = []float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// e2m1Magnitudes are the OCP E2M1 magnitudes of codes 0–7.
var e2m1Magnitudes = []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}

func mustTable(t *Table, err error) *Table {
	if err != nil {
		panic(err) // a built-in table is wrong: a programming error
	}
	return t
}

var (
	nf4 = sync.OnceValue(func() *Table {
		return mustTable(NewTable("nf4", nf4Values, &TableOptions{Thresholds: nf4Thresholds}))
	})
	fp4 = sync.OnceValue(func() *Table {
		mags := make([]float32, len(fp4Raw))
		for i, r := range fp4Raw {
			mags[i] = r / 12 // float32 division, as bitsandbytes normalizes its table
		}
		return mustTable(NewSignedTable("bnb_fp4", mags, &TableOptions{AnyOrder: true, Thresholds: fp4Thresholds, NegZeroPositive: true}))
	})
	iq4nl = sync.OnceValue(func() *Table {
		return mustTable(NewTable("iq4_nl", iq4nlValues, &TableOptions{Tie: TieUpper}))
	})
	e2m1 = sync.OnceValue(func() *Table {
		return mustTable(NewSignedTable("e2m1", e2m1Magnitudes, &TableOptions{Tie: TieEven}))
	})
)

// NF4 returns bitsandbytes' 4-bit NormalFloat table: 16 entries in ascending
// code order from −1 to 1 with 0 at code 7, encoded as bitsandbytes' kernel
// does (x goes above each of its float32 thresholds when x > threshold, so a
// value on a threshold takes the lower entry). A NaN encodes to code 7
// (bitsandbytes' kernel gives code 0).
func NF4() *Table { return nf4() }

// FP4 returns bitsandbytes' FP4 table: sign-magnitude, code bit 3 the sign,
// magnitudes {0, 0.0625, 8, 12, 4, 6, 2, 3}/12 for codes 0–7 (not the OCP
// E2M1 values), encoded as bitsandbytes' kernel does: the sign from x < 0
// (so −0 encodes as +0), |x| against its float32 thresholds, strictly.
func FP4() *Table { return fp4() }

// IQ4NL returns ggml's IQ4_NL table (kvalues_iq4nl): the int8 values −127 …
// 113, asymmetric and without zero, which a block's float16 scale d
// multiplies. A value halfway between two entries takes the upper one, as
// ggml's search does.
func IQ4NL() *Table { return iq4nl() }

// E2M1 returns OCP FP4 (E2M1) as a table: sign-magnitude, magnitudes 0, 0.5,
// 1, 1.5, 2, 3, 4, 6, ties to the even code — the same codes as the e2m1
// format's round to nearest even with saturation.
func E2M1() *Table { return e2m1() }

// Builtin returns the built-in table of a name ("nf4", "bnb_fp4", "iq4_nl",
// "e2m1"), or nil.
func Builtin(name string) *Table {
	switch name {
	case "nf4":
		return NF4()
	case "bnb_fp4":
		return FP4()
	case "iq4_nl":
		return IQ4NL()
	case "e2m1":
		return E2M1()
	}
	return nil
}
