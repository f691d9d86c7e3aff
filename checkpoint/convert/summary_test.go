package convert

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarize(t *testing.T) {
	db := func(v float64) *float64 { return &v }
	r := &Result{Tensors: []TensorResult{
		// 3 × 100 elements at 4.5 bits, 30 dB; 100 at 8.5 bits, 40 dB.
		{Name: "a", Shape: []int{3, 100}, DataType: "q4_k", Bits: 4.5, SQNR: db(30), WeightedSQNR: db(31), Importance: ImportanceUsed},
		{Name: "b", Shape: []int{100}, DataType: "q8_0", Bits: 8.5, SQNR: db(40), Importance: ImportanceUnused},
		{Name: "c", Shape: []int{2, 50}, DataType: "q4_k", Bits: 4.5, Importance: ImportanceMissing}, // exact: no SQNR
		{Name: "n", Shape: []int{10}, Note: "kept: norm"},
		{Name: "d", Shape: []int{10}, Note: "dropped: x", Dropped: true},
	}}
	s := r.Summarize()
	assert.Equal(t, []TypeCount{{"q4_k", 2}, {"kept", 1}, {"q8_0", 1}}, s.Types)
	// (300·4.5 + 100·8.5 + 100·4.5) / 500 = 2650/500.
	assert.InDelta(t, 5.3, s.Bits, 1e-12)
	// (300·30 + 100·40) / 400: by elements, not (30 + 40)/2.
	require.NotNil(t, s.SQNR)
	assert.InDelta(t, 32.5, *s.SQNR, 1e-12)
	require.NotNil(t, s.WeightedSQNR)
	assert.InDelta(t, 31.0, *s.WeightedSQNR, 1e-12)
	assert.Equal(t, map[ImportanceStatus]int{ImportanceUsed: 1, ImportanceUnused: 1, ImportanceMissing: 1}, s.Importance)

}

// ImportanceStatus is written as its sentence and read back, in a report's
// field and as a key of the summary's counts.
func TestImportanceStatusText(t *testing.T) {
	want := map[ImportanceStatus]string{
		ImportanceUsed:      "used",
		ImportanceMissing:   "missing: quantized without",
		ImportanceIgnored:   "size mismatch on the token embedding: quantized without",
		ImportanceUnused:    "not used by this type's quantizer",
		ImportanceZeroCount: "zero counts: quantized without",
		ImportanceAllZero:   "all zero: quantized without",
	}
	for s, text := range want {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, strconv.Quote(text), string(b))
		var back ImportanceStatus
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, s, back)
	}
	b, err := json.Marshal(Summary{Importance: map[ImportanceStatus]int{ImportanceUsed: 2, ImportanceMissing: 1}})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"importance":{"missing: quantized without":1,"used":2}`)
	b, err = json.Marshal(TensorResult{Name: "w"})
	require.NoError(t, err)
	assert.NotContains(t, string(b), "importance")
	assert.Error(t, new(ImportanceStatus).UnmarshalText([]byte("sometimes")))
	_, err = ImportanceStatus(99).MarshalText()
	assert.Error(t, err)
}
