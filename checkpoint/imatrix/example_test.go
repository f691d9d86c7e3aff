package imatrix_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
)

func ExampleParse_errors() {
	// Text is no importance matrix at all; a .dat of one entry whose
	// values are cut short is a truncated one.
	// (entry count 1; name "w", ncall 1, nval 2, then one value of two).
	dat := "\x01\x00\x00\x00" + "\x01\x00\x00\x00w" + "\x01\x00\x00\x00" + "\x02\x00\x00\x00" +
		"\x00\x00\x80\x3f"
	for _, file := range []string{"hello, this is text\n", dat} {
		_, err := imatrix.Parse(strings.NewReader(file), int64(len(file)), "im.dat")
		fmt.Println(errors.Is(err, imatrix.ErrNotFormat), errors.Is(err, imatrix.ErrTruncated))
	}
	// Output:
	// true false
	// false true
}
