// Package shufflerproto is the shuffler's report message: the optional text
// line a shuffler sends when a shoe is shuffled, naming the shoe and how
// many cards went into it. SPEC.md beside this file describes the GPIO
// handshake lines and this message; the package only parses and formats,
// it never touches a port.
package shufflerproto

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Verb opens every report line.
const Verb = "SHUFFLED"

// MaxLine is the longest line accepted; a longer one is noise on the wire.
const MaxLine = 256

// Report is one shuffled shoe, as the shuffler reports it.
type Report struct {
	// Shoe is the shoe body, "A" or "B".
	Shoe string
	// ShoeID is the shuffler's id of this shuffled set; empty when it gives
	// none.
	ShoeID string
	// Cards is the number of cards the shuffler counted; 0 when it gives
	// none.
	Cards int
}

// Errors of Parse. Each wraps ErrMalformed so a caller can branch on the
// family and log the detail.
var (
	// ErrMalformed is a line that is not a valid report.
	ErrMalformed = errors.New("shufflerproto: malformed report")
	// ErrTooLong is a line longer than MaxLine.
	ErrTooLong = fmt.Errorf("%w: line too long", ErrMalformed)
)

// Parse reads one line ("SHUFFLED shoe=B id=B-0007 cards=416", trailing
// CR/LF allowed). Fields are separated by spaces and may come in any
// order; shoe is required, id and cards are optional; unknown fields are
// ignored so a newer shuffler stays readable.
func Parse(line string) (Report, error) {
	if len(line) > MaxLine {
		return Report{}, ErrTooLong
	}
	fields := strings.Fields(strings.TrimRight(line, "\r\n"))
	if len(fields) == 0 || fields[0] != Verb {
		return Report{}, fmt.Errorf("%w: want %s", ErrMalformed, Verb)
	}
	var r Report
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return Report{}, fmt.Errorf("%w: field %q", ErrMalformed, f)
		}
		if seen[k] {
			return Report{}, fmt.Errorf("%w: %s twice", ErrMalformed, k)
		}
		seen[k] = true
		switch k {
		case "shoe":
			if v != "A" && v != "B" {
				return Report{}, fmt.Errorf("%w: shoe %q", ErrMalformed, v)
			}
			r.Shoe = v
		case "id":
			if !validID(v) {
				return Report{}, fmt.Errorf("%w: id %q", ErrMalformed, v)
			}
			r.ShoeID = v
		case "cards":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > 10000 {
				return Report{}, fmt.Errorf("%w: cards %q", ErrMalformed, v)
			}
			r.Cards = n
		}
	}
	if r.Shoe == "" {
		return Report{}, fmt.Errorf("%w: no shoe", ErrMalformed)
	}
	return r, nil
}

// validID accepts the characters a shoe id may carry on the wire and in
// MQTT topics: letters, digits, '-', '_', '.' and ':', at most 64.
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// String formats r as the line Parse reads, without the line ending.
func (r Report) String() string {
	var b strings.Builder
	b.WriteString(Verb)
	b.WriteString(" shoe=")
	b.WriteString(r.Shoe)
	if r.ShoeID != "" {
		b.WriteString(" id=")
		b.WriteString(r.ShoeID)
	}
	if r.Cards > 0 {
		b.WriteString(" cards=")
		b.WriteString(strconv.Itoa(r.Cards))
	}
	return b.String()
}
