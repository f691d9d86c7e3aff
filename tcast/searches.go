package tcast

// SearchesScales reports whether Options.ScaleSearch changes casts to dt:
// a scaled datatype whose scales come by rule and carry no zero point, no
// subtile offsets and no codebook (MX, NVFP4, symmetric integer groups, FP8
// with per-tensor, per-channel or block scales). Other datatypes ignore the
// option.
func (dt *DataType) SearchesScales() bool {
	if dt == nil || dt.cb != nil || dt.spec == nil || dt.spec.Zero != nil {
		return false
	}
	for _, t := range dt.spec.Tiles {
		if t.Offset != 0 {
			return false
		}
	}
	return true
}

// UsesImportanceWith reports whether casts to dt with options o (nil: the
// zero Options) weigh o.Importance: the datatypes of UsesImportance, and,
// when o.ScaleSearch is set, those of SearchesScales, whose search weighs
// each candidate's squared error by it.
func (dt *DataType) UsesImportanceWith(o *Options) bool {
	return dt.UsesImportance() || (o != nil && o.ScaleSearch && dt.SearchesScales())
}
