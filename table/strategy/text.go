package strategy

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

type section uint8

const (
	sectionNone section = iota
	sectionHard
	sectionSoft
	sectionPair
	sectionFreeHard
	sectionFreePair
)

// parseSection reads a section name: one of sectionNames, or "hard-N" /
// "soft-N" for the rows of hands of N cards.
func parseSection(name string) (section, int, bool) {
	if s, ok := sectionNames[name]; ok {
		return s, 0, true
	}
	kind, num, ok := strings.Cut(name, "-")
	if !ok || (kind != "hard" && kind != "soft") {
		return sectionNone, 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < FirstCards || n > MaxCards {
		return sectionNone, 0, false
	}
	if kind == "hard" {
		return sectionHard, n, true
	}
	return sectionSoft, n, true
}

var sectionNames = map[string]section{
	"hard": sectionHard, "soft": sectionSoft, "pair": sectionPair,
	"free-hard": sectionFreeHard, "free-pair": sectionFreePair,
}

// upLabel is the column heading of an up card value: "2".."9", "T", "A".
func upLabel(up int) string {
	switch up {
	case 1:
		return "A"
	case 10:
		return "T"
	}
	return strconv.Itoa(up)
}

func parseUp(s string) (int, bool) {
	switch strings.ToUpper(s) {
	case "A":
		return 1, true
	case "T", "10":
		return 10, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 2 || n > 9 {
		return 0, false
	}
	return n, true
}

// rowLabel is the label of row r in a section: the total for hard rows,
// "A1".."A10" for soft totals 12..21, "AA", "22".."99", "TT" for pairs.
func rowLabel(s section, r int) string {
	switch s {
	case sectionSoft:
		return "A" + strconv.Itoa(r-11)
	case sectionPair, sectionFreePair:
		l := upLabel(r)
		return l + l
	}
	return strconv.Itoa(r)
}

// parseRows reads a row label of section s into the first and last row it
// covers (a range like "4-8" for hard rows).
func parseRows(s section, label string) (first, last int, ok bool) {
	switch s {
	case sectionHard, sectionFreeHard:
		lo, hi, isRange := strings.Cut(label, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0, 0, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return 0, 0, false
			}
		}
		if a < HardFirst || b > LastTotal || a > b {
			return 0, 0, false
		}
		return a, b, true
	case sectionSoft:
		if len(label) < 2 || (label[0] != 'A' && label[0] != 'a') {
			return 0, 0, false
		}
		n, err := strconv.Atoi(label[1:])
		if err != nil || n < 1 || n > 10 {
			return 0, 0, false
		}
		return n + 11, n + 11, true
	case sectionPair, sectionFreePair:
		if len(label) != 2 || !strings.EqualFold(label[:1], label[1:]) {
			return 0, 0, false
		}
		v, ok := parseUp(label[:1])
		return v, v, ok
	}
	return 0, 0, false
}

// Parse reads a chart in the text form described in the package comment and
// compiles it with New. Lines starting with '#' are notes; a '#' after a row
// is a comment. Errors are *ParseError values wrapping ErrSyntax,
// ErrIncomplete or ErrBadCode.
func Parse(r io.Reader) (*Table, error) {
	c, err := ParseChart(r)
	if err != nil {
		return nil, err
	}
	t, err := New(c)
	if err != nil {
		return nil, &ParseError{Err: err}
	}
	return t, nil
}

// ParseChart reads the text form into a Chart without compiling it.
func ParseChart(r io.Reader) (Chart, error) {
	var (
		c       Chart
		sec     section
		secN    int // card count of a hard-N or soft-N section, else 0
		cols    []int
		legend  map[string]Code
		seen    = map[string]bool{}
		lineNo  int
		sawName bool
	)
	fail := func(sentinel error, format string, args ...any) (Chart, error) {
		return Chart{}, &ParseError{Line: lineNo, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			c.Notes = append(c.Notes, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			continue
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if key, val, ok := strings.Cut(line, ":"); ok {
			val = strings.TrimSpace(val)
			switch strings.TrimSpace(key) {
			case "name":
				c.Name, sawName = val, true
			case "das":
				switch val {
				case "yes":
					c.DAS = true
				case "no":
					c.DAS = false
				default:
					return fail(ErrSyntax, "das must be yes or no, not %q", val)
				}
			case "legend":
				legend = map[string]Code{}
				for _, f := range strings.Fields(val) {
					k, v, ok := strings.Cut(f, "=")
					code, err := ParseCode(v)
					if !ok || k == "" || err != nil {
						return fail(ErrSyntax, "legend entry %q: want LETTER=CODE", f)
					}
					legend[k] = code
				}
			default:
				return fail(ErrSyntax, "unknown key %q", key)
			}
			continue
		}
		fields := strings.Fields(line)
		if s, n, ok := parseSection(fields[0]); ok {
			if seen[fields[0]] {
				return fail(ErrSyntax, "section %s repeated", fields[0])
			}
			seen[fields[0]] = true
			if len(fields) != 11 {
				return fail(ErrSyntax, "section %s: want 10 up-card columns, got %d", fields[0], len(fields)-1)
			}
			sec, secN, cols = s, n, make([]int, 10)
			var have [11]bool
			for i, f := range fields[1:] {
				up, ok := parseUp(f)
				if !ok || have[up] {
					return fail(ErrSyntax, "bad or repeated up-card column %q", f)
				}
				have[up], cols[i] = true, up
			}
			continue
		}
		if sec == sectionNone {
			return fail(ErrSyntax, "row %q before any section", fields[0])
		}
		first, last, ok := parseRows(sec, fields[0])
		if !ok {
			return fail(ErrSyntax, "bad row label %q", fields[0])
		}
		if len(fields) != 11 {
			return fail(ErrSyntax, "row %s: want 10 cells, got %d", fields[0], len(fields)-1)
		}
		var row [11]Code
		for i, f := range fields[1:] {
			var code Code
			var err error
			if legend == nil {
				code, err = ParseCode(f)
			} else if code = legend[f]; code == None {
				err = fmt.Errorf("%w: %q is not in the legend", ErrBadCode, f)
			}
			if err != nil {
				return Chart{}, &ParseError{Line: lineNo, Err: err}
			}
			row[cols[i]] = code
		}
		for r := first; r <= last; r++ {
			dst := c.rowPtr(sec, secN, r)
			if dst[1] != None {
				return fail(ErrSyntax, "row %s repeated", rowLabel(sec, r))
			}
			*dst = row
		}
	}
	if err := sc.Err(); err != nil {
		return Chart{}, &ParseError{Line: lineNo, Err: fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	if !sawName {
		return Chart{}, &ParseError{Err: fmt.Errorf("%w: no name line", ErrIncomplete)}
	}
	return c, nil
}

func (c *Chart) rowPtr(s section, n, r int) *[11]Code {
	switch {
	case s == sectionHard && n > 0:
		return &c.CardsHard[n][r]
	case s == sectionSoft && n > 0:
		return &c.CardsSoft[n][r]
	}
	switch s {
	case sectionHard:
		return &c.Hard[r]
	case sectionSoft:
		return &c.Soft[r]
	case sectionPair:
		return &c.Pair[r]
	case sectionFreeHard:
		return &c.FreeHard[r]
	default:
		return &c.FreePair[r]
	}
}

// columnOrder is the up-card order of the printed charts: 2..9, T, A.
var columnOrder = [10]int{2, 3, 4, 5, 6, 7, 8, 9, 10, 1}

// Format writes the table in the text form that Parse reads. Its output
// for a given chart is stable, so generated files can be compared byte for
// byte.
func Format(w io.Writer, t *Table) error {
	c := &t.chart
	bw := bufio.NewWriter(w)
	for _, n := range c.Notes {
		if n == "" {
			bw.WriteString("#\n")
			continue
		}
		fmt.Fprintf(bw, "# %s\n", n)
	}
	fmt.Fprintf(bw, "name: %s\n", c.Name)
	das := "no"
	if c.DAS {
		das = "yes"
	}
	fmt.Fprintf(bw, "das: %s\n", das)
	writeSection := func(name string, s section, n, first, last int) {
		wrote := false
		for r := first; r <= last; r++ {
			row := c.rowPtr(s, n, r)
			if row[1] == None {
				continue
			}
			if !wrote {
				var head [10]string
				for i, up := range columnOrder {
					head[i] = upLabel(up)
				}
				bw.WriteString("\n")
				writeLine(bw, name, head)
				wrote = true
			}
			var cells [10]string
			for i, up := range columnOrder {
				cells[i] = row[up].String()
			}
			writeLine(bw, rowLabel(s, r), cells)
		}
	}
	writeSection("hard", sectionHard, 0, HardFirst, LastTotal)
	writeSection("soft", sectionSoft, 0, SoftFirst, LastTotal)
	writeSection("pair", sectionPair, 0, 1, 10)
	writeSection("free-hard", sectionFreeHard, 0, HardFirst, LastTotal)
	writeSection("free-pair", sectionFreePair, 0, 1, 10)
	for n := FirstCards; n <= MaxCards; n++ {
		writeSection(fmt.Sprintf("hard-%d", n), sectionHard, n, HardFirst, LastTotal)
		writeSection(fmt.Sprintf("soft-%d", n), sectionSoft, n, SoftFirst, LastTotal)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("strategy: format %s: %w", c.Name, err)
	}
	return nil
}

// writeLine writes a label and ten columns aligned like a printed chart,
// without trailing blanks.
func writeLine(w *bufio.Writer, label string, cols [10]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s", label)
	for _, c := range cols {
		fmt.Fprintf(&b, " %-2s", c)
	}
	w.WriteString(strings.TrimRight(b.String(), " "))
	w.WriteString("\n")
}
