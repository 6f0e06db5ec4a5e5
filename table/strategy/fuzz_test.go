package strategy_test

import (
	"bytes"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/livetable/livetable/table/strategy"
)

// FuzzParse feeds arbitrary text to Parse, one byte per read so that line
// splitting is exercised: it must never panic, and whatever it accepts must
// survive Format and Parse unchanged.
func FuzzParse(f *testing.F) {
	for _, code := range []string{"000", "001", "002", "003", "004", "004-auto"} {
		b, err := strategy.DataFileBytes(code)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(chartText("D D D D D D D D Ds Ds", "free-hard 2 3 4 5 6 7 8 9 T A\n11 D D D D D D D D D D\n")))
	f.Fuzz(func(t *testing.T, text []byte) {
		tab, err := strategy.Parse(iotest.OneByteReader(bytes.NewReader(text)))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := strategy.Format(&b, tab); err != nil {
			t.Fatal(err)
		}
		back, err := strategy.Parse(&b)
		if err != nil {
			t.Fatalf("formatted table does not parse: %v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(back.Chart(), tab.Chart()) {
			t.Fatalf("round trip changed the chart")
		}
	})
}
