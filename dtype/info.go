package dtype

// Info is a summary of a format's definition and derived constants, in a form
// meant for JSON (the info.json of `tcast cast`, `tcast formats`).
type Info struct {
	Name         string  `json:"name"`
	Kind         string  `json:"kind"`
	Bits         int     `json:"bits"`
	ExpBits      int     `json:"exponent_bits,omitempty"`
	ManBits      int     `json:"mantissa_bits,omitempty"`
	Bias         int     `json:"bias,omitempty"`
	Special      string  `json:"special,omitempty"`
	Signed       bool    `json:"signed"`
	Emax         int     `json:"emax"`
	Emin         int     `json:"emin"`
	MaxFinite    float32 `json:"max_finite"`
	MaxCode      uint32  `json:"max_code"`
	MinNormal    float32 `json:"min_normal"`
	MinSubnormal float32 `json:"min_subnormal"`
	Midmax       float64 `json:"midmax"`
	Eps          float32 `json:"eps"`
	HasInf       bool    `json:"has_inf"`
	HasNegZero   bool    `json:"has_negative_zero"`
	NaNCount     int     `json:"nan_codes"`
	NaN          *uint32 `json:"nan,omitempty"`
	Note         string  `json:"note,omitempty"`
}

// Info returns the summary of f.
func (f *Format) Info() Info {
	in := Info{
		Name:         f.name,
		Kind:         f.kind.String(),
		Bits:         f.bits,
		Signed:       f.signed,
		Emax:         f.Emax(),
		Emin:         f.Emin(),
		MaxFinite:    f.MaxFinite(),
		MaxCode:      f.MaxCode(),
		MinNormal:    f.MinNormal(),
		MinSubnormal: f.MinSubnormal(),
		Midmax:       f.Midmax(),
		Eps:          f.Eps(),
		HasInf:       f.HasInf(),
		HasNegZero:   f.HasNegZero(),
		NaNCount:     f.NaNCount(),
		Note:         f.note,
	}
	switch f.kind {
	case Float:
		in.ExpBits, in.ManBits, in.Bias, in.Special = f.ebits, f.mbits, f.bias, f.special.String()
	case Exponent:
		in.ExpBits, in.Bias = f.ebits, f.bias
	case Int:
		in.ManBits = f.mbits
	}
	if c, ok := f.NaN(); ok {
		in.NaN = &c
	}
	return in
}
