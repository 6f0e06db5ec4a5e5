package strategy

import "fmt"

// Code is one cell of a chart: the action it asks for and what to do when
// that action is not allowed.
type Code uint8

// The cell codes. The zero Code is "no cell", allowed only in the optional
// free rows.
const (
	None        Code = iota // no cell (an absent optional row)
	CodeHit                 // "H": hit
	CodeStand               // "S": stand
	CodeDouble              // "D": double if allowed, else hit
	CodeDoubleS             // "Ds": double if allowed, else stand
	CodeSplit               // "P": split if allowed, else play the total
	CodeSplitH              // "Ph": split if the chart allows double after split, else hit
	numCodes
)

var codeNames = [numCodes]string{"-", "H", "S", "D", "Ds", "P", "Ph"}

// String returns the code's spelling in the text form ("H", "Ds", ...).
func (c Code) String() string {
	if c < numCodes {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", uint8(c))
}

// ParseCode reads a code's spelling ("H", "S", "D", "Ds", "P", "Ph").
func ParseCode(s string) (Code, error) {
	for c := CodeHit; c < numCodes; c++ {
		if codeNames[c] == s {
			return c, nil
		}
	}
	return None, fmt.Errorf("%w: unknown code %q", ErrBadCode, s)
}

func (c Code) isSplit() bool { return c == CodeSplit || c == CodeSplitH }

// Row ranges of the sections. Arrays are indexed by the row value itself
// (total or pair value) and by the up card value 1..10, so index 0 and the
// rows below the first are unused.
const (
	HardFirst = 4  // first hard row (2+2); lower totals use it
	SoftFirst = 12 // first soft row (A+A)
	LastTotal = 21 // last hard and soft row
	// FirstCards and MaxCards bound the card counts that may have rows of
	// their own (Chart.CardsHard, Chart.CardsSoft).
	FirstCards = 3
	MaxCards   = 10
)

// Chart is the editable data of a table. Arrays are indexed [row][up], the
// up card being 1 (ace) .. 10.
type Chart struct {
	Name  string   // short name written on the "name:" line
	DAS   bool     // doubling after a split is allowed: resolves "Ph"
	Notes []string // comment lines written at the top by Format

	Hard [LastTotal + 1][11]Code // hard totals 4..21
	Soft [LastTotal + 1][11]Code // soft totals 12..21 (A1 .. A10)
	Pair [11][11]Code            // pair values 1 (A,A) .. 10 (T,T)
	// FreeHard has optional rows used when the double on offer is free.
	FreeHard [LastTotal + 1][11]Code
	// FreePair has optional rows used when the split on offer is free.
	FreePair [11][11]Code
	// CardsHard and CardsSoft have optional rows, indexed [cards][total][up],
	// for hands of exactly that many cards (FirstCards..MaxCards). They
	// come before the plain hard and soft rows: with a charlie (002 wins
	// with six cards) a four- or five-card hand hits totals a two-card hand
	// stands on.
	CardsHard [MaxCards + 1][LastTotal + 1][11]Code
	CardsSoft [MaxCards + 1][LastTotal + 1][11]Code
}

// cell is a compiled Code: bits 0-1 the action, bits 2-3 the fallback when
// a double is not allowed, and flags.
type cell uint8

const (
	cellNeedDouble cell = 1 << 4 // the action is Double: fall back when not allowed
	cellNeedSplit  cell = 1 << 5 // the action is Split: use the totals when not allowed
	cellPresent    cell = 1 << 7
)

func compile(c Code, das bool) cell {
	switch c {
	case CodeHit:
		return cellPresent | cell(Hit)
	case CodeStand:
		return cellPresent | cell(Stand)
	case CodeDouble:
		return cellPresent | cellNeedDouble | cell(Double) | cell(Hit)<<2
	case CodeDoubleS:
		return cellPresent | cellNeedDouble | cell(Double) | cell(Stand)<<2
	case CodeSplit:
		return cellPresent | cellNeedSplit | cell(Split)
	case CodeSplitH:
		if das {
			return cellPresent | cellNeedSplit | cell(Split)
		}
		return cellPresent | cell(Hit)
	}
	return 0
}

// Table is a compiled, immutable chart. It is safe for concurrent use.
type Table struct {
	chart    Chart
	hard     [LastTotal + 1][11]cell
	soft     [LastTotal + 1][11]cell
	pair     [11][11]cell
	freeHard [LastTotal + 1][11]cell
	freePair [11][11]cell
	// cardsHard and cardsSoft are indexed by card count; nil when the
	// chart has no row for that count.
	cardsHard [MaxCards + 1]*[LastTotal + 1][11]cell
	cardsSoft [MaxCards + 1]*[LastTotal + 1][11]cell
}

// New checks a chart and compiles it. Every hard, soft and pair cell must be
// set; a free row is either complete or absent; split codes only appear in
// pair rows.
func New(c Chart) (*Table, error) {
	t := &Table{chart: c}
	t.chart.Notes = append([]string(nil), c.Notes...)
	for r := HardFirst; r <= LastTotal; r++ {
		if err := compileRow(&t.hard[r], &c.Hard[r], c.DAS, false, true, "hard", rowLabel(sectionHard, r)); err != nil {
			return nil, err
		}
		if err := compileRow(&t.freeHard[r], &c.FreeHard[r], c.DAS, false, false, "free-hard", rowLabel(sectionHard, r)); err != nil {
			return nil, err
		}
	}
	for r := SoftFirst; r <= LastTotal; r++ {
		if err := compileRow(&t.soft[r], &c.Soft[r], c.DAS, false, true, "soft", rowLabel(sectionSoft, r)); err != nil {
			return nil, err
		}
	}
	for r := 1; r <= 10; r++ {
		if err := compileRow(&t.pair[r], &c.Pair[r], c.DAS, true, true, "pair", rowLabel(sectionPair, r)); err != nil {
			return nil, err
		}
		if err := compileRow(&t.freePair[r], &c.FreePair[r], c.DAS, true, false, "free-pair", rowLabel(sectionPair, r)); err != nil {
			return nil, err
		}
	}
	for n := 0; n <= MaxCards; n++ {
		if err := t.compileCards(&c, n); err != nil {
			return nil, err
		}
	}
	// Rows outside the ranges must be empty, so that Format and Parse
	// round-trip every chart New accepts.
	for r := 0; r <= LastTotal; r++ {
		for up := 0; up <= 10; up++ {
			outHard := r < HardFirst || up == 0
			outSoft := r < SoftFirst || up == 0
			outPair := r < 1 || r > 10 || up == 0
			if (outHard && (c.Hard[r][up] != None || c.FreeHard[r][up] != None)) ||
				(outSoft && c.Soft[r][up] != None) ||
				(outPair && r < 11 && (c.Pair[r][up] != None || c.FreePair[r][up] != None)) {
				return nil, fmt.Errorf("%w: cell [%d][%d] outside the chart's rows", ErrBadCode, r, up)
			}
		}
	}
	return t, nil
}

// compileCards compiles the rows of hands of n cards, leaving the table's
// pointers nil when there are none.
func (t *Table) compileCards(c *Chart, n int) error {
	var hard, soft [LastTotal + 1][11]cell
	found := false
	for r := 0; r <= LastTotal; r++ {
		for up := 0; up <= 10; up++ {
			if c.CardsHard[n][r][up] == None && c.CardsSoft[n][r][up] == None {
				continue
			}
			if n < FirstCards || r < HardFirst || up == 0 || (r < SoftFirst && c.CardsSoft[n][r][up] != None) {
				return fmt.Errorf("%w: %d-card cell [%d][%d] outside the chart's rows", ErrBadCode, n, r, up)
			}
			found = true
		}
	}
	if !found {
		return nil
	}
	label := fmt.Sprintf("-%d", n)
	for r := HardFirst; r <= LastTotal; r++ {
		if err := compileRow(&hard[r], &c.CardsHard[n][r], c.DAS, false, false, "hard"+label, rowLabel(sectionHard, r)); err != nil {
			return err
		}
	}
	for r := SoftFirst; r <= LastTotal; r++ {
		if err := compileRow(&soft[r], &c.CardsSoft[n][r], c.DAS, false, false, "soft"+label, rowLabel(sectionSoft, r)); err != nil {
			return err
		}
	}
	t.cardsHard[n], t.cardsSoft[n] = &hard, &soft
	return nil
}

func compileRow(dst *[11]cell, src *[11]Code, das, pair, required bool, section, label string) error {
	set := 0
	for up := 1; up <= 10; up++ {
		c := src[up]
		if c == None {
			continue
		}
		if c >= numCodes || (c.isSplit() && !pair) {
			return fmt.Errorf("%w: %s row %s vs %s: %v", ErrBadCode, section, label, upLabel(up), c)
		}
		set++
		dst[up] = compile(c, das)
	}
	switch {
	case set == 10:
		return nil
	case set == 0 && !required:
		return nil
	}
	return fmt.Errorf("%w: %s row %s has %d of 10 cells", ErrIncomplete, section, label, set)
}

// Chart returns a copy of the table's data.
func (t *Table) Chart() Chart {
	c := t.chart
	c.Notes = append([]string(nil), t.chart.Notes...)
	return c
}

// Name is the chart's name.
func (t *Table) Name() string { return t.chart.Name }

// resolve turns a compiled cell into an action given what is legal; ok is
// false when the cell asks for a split that is not allowed, so the caller
// goes on to the totals.
func (c cell) resolve(canDouble, canSplit bool) (a Action, ok bool) {
	switch {
	case c&cellNeedSplit != 0:
		return Split, canSplit
	case c&cellNeedDouble != 0 && !canDouble:
		return Action(c >> 2 & 3), true
	}
	return Action(c & 3), true
}

// Decide returns the chart's action for s, never one that s says is not
// legal: a double that is not allowed falls back to the cell's hit or
// stand, and a split that is not allowed falls back to the hard or soft
// row of the total. A row for the hand's number of cards, when the chart
// has one, comes before the plain hard or soft row. A pair row is read
// whenever s.PairValue is set, so a
// chart's pair row also decides the two-card pair hands it does not split.
// Input out of range does not panic: a total over 21 stands, a total below
// 4 reads the first hard row, and an up card outside 1..10 stands. Decide
// does not allocate.
func (t *Table) Decide(s Situation) Action {
	up := s.Up
	if up < 1 || up > 10 {
		return Stand
	}
	if p := s.PairValue; p >= 1 && p <= 10 {
		c := t.pair[p][up]
		if s.FreeSplit && t.freePair[p][up] != 0 {
			c = t.freePair[p][up]
		}
		if a, ok := c.resolve(s.CanDouble, s.CanSplit); ok {
			return a
		}
	}
	total := s.Total
	var c cell
	switch {
	case total > LastTotal:
		return Stand
	case s.Soft && total >= SoftFirst:
		c = t.soft[total][up]
		if n := s.Cards; n >= FirstCards && n <= MaxCards && t.cardsSoft[n] != nil && t.cardsSoft[n][total][up] != 0 {
			c = t.cardsSoft[n][total][up]
		}
	default:
		if total < HardFirst {
			total = HardFirst
		}
		c = t.hard[total][up]
		if n := s.Cards; n >= FirstCards && n <= MaxCards && t.cardsHard[n] != nil && t.cardsHard[n][total][up] != 0 {
			c = t.cardsHard[n][total][up]
		}
		if s.FreeDouble && t.freeHard[total][up] != 0 {
			c = t.freeHard[total][up]
		}
	}
	a, _ := c.resolve(s.CanDouble, false)
	return a
}
