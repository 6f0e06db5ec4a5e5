package shufflerproto

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines is the one table of wire lines shared by the tests and the fuzz
// seed corpus.
var lines = []struct {
	name string
	line string
	want Report
	err  error
}{
	{"full", "SHUFFLED shoe=B id=B-0007 cards=416\r\n", Report{Shoe: "B", ShoeID: "B-0007", Cards: 416}, nil},
	{"shoe only", "SHUFFLED shoe=A", Report{Shoe: "A"}, nil},
	{"any order, unknown field", "SHUFFLED cards=312 fw=2.1 shoe=A", Report{Shoe: "A", Cards: 312}, nil},
	{"no verb", "shoe=A", Report{}, ErrMalformed},
	{"empty", "", Report{}, ErrMalformed},
	{"bad shoe", "SHUFFLED shoe=C", Report{}, ErrMalformed},
	{"no shoe", "SHUFFLED cards=416", Report{}, ErrMalformed},
	{"bad cards", "SHUFFLED shoe=A cards=-3", Report{}, ErrMalformed},
	{"cards not a number", "SHUFFLED shoe=A cards=lots", Report{}, ErrMalformed},
	{"bad id", "SHUFFLED shoe=A id=a/b", Report{}, ErrMalformed},
	{"field twice", "SHUFFLED shoe=A shoe=B", Report{}, ErrMalformed},
	{"field without value", "SHUFFLED shoe", Report{}, ErrMalformed},
	{"too long", "SHUFFLED shoe=A " + strings.Repeat("x=y ", 100), Report{}, ErrTooLong},
}

func TestParse(t *testing.T) {
	for _, tt := range lines {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.line)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			back, err := Parse(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back, "String is read back by Parse")
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, tt := range lines {
		f.Add(tt.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := Parse(line)
		if err != nil {
			return
		}
		back, err := Parse(r.String())
		if err != nil {
			t.Fatalf("formatted report %q does not parse: %v", r.String(), err)
		}
		if back != r {
			t.Fatalf("round trip %+v != %+v", back, r)
		}
	})
}
