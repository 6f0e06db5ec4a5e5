package card

import "testing"

// FuzzParse reads arbitrary bytes as a card in its wire form (commands,
// scenarios, the shoe's corrections): never a panic; a card it accepts is
// valid, and its String form parses back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"As", "Td", "10h", "qC", "1", "", "Zz", "10", "A\x00", "\xff\xfe"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseBytes(b)
		if err != nil {
			return
		}
		if !c.Valid() {
			t.Fatalf("%q parsed to an invalid card %v", b, c)
		}
		back, err := Parse(c.String())
		if err != nil || back != c {
			t.Fatalf("%q -> %v -> %q -> %v, %v", b, c, c.String(), back, err)
		}
	})
}
