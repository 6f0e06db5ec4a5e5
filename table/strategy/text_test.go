package strategy_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/strategy"
)

func allTables(t *testing.T) map[string]*strategy.Table {
	t.Helper()
	out := map[string]*strategy.Table{"004-auto": strategy.SisalNoDoubleNoSplit()}
	for _, code := range []string{"000", "001", "002", "003", "004"} {
		tab, err := strategy.ForGame(code)
		require.NoError(t, err, code)
		out[code] = tab
	}
	return out
}

func TestFormatParseRoundTrip(t *testing.T) {
	for name, tab := range allTables(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, strategy.Format(&b, tab))
			back, err := strategy.Parse(bytes.NewReader(b.Bytes()))
			require.NoError(t, err)
			assert.Equal(t, tab.Chart(), back.Chart())
			var again bytes.Buffer
			require.NoError(t, strategy.Format(&again, back))
			assert.Equal(t, b.String(), again.String(), "Format is not stable")
		})
	}
}

func TestChartCopyIsIndependent(t *testing.T) {
	tab := strategy.Sisal()
	c := tab.Chart()
	c.Hard[16][10] = strategy.CodeStand
	c.Notes[0] = "changed"
	assert.Equal(t, strategy.Hit, tab.Decide(two(10, 6, 10)))
	assert.NotEqual(t, "changed", tab.Chart().Notes[0])
	changed, err := strategy.New(c)
	require.NoError(t, err)
	assert.Equal(t, strategy.Stand, changed.Decide(two(10, 6, 10)))
}

const minimal = `name: tiny
das: no
hard 2 3 4 5 6 7 8 9 T A
4-16  H H H H H H H H H H
17-21 S S S S S S S S S S
soft 2 3 4 5 6 7 8 9 T A
A1-  H H H H H H H H H H
`

// chartText builds a complete chart text whose hard 11 row is row11.
func chartText(row11 string, extra string) string {
	var b strings.Builder
	b.WriteString("name: t\ndas: yes\nhard 2 3 4 5 6 7 8 9 T A\n4-10 H H H H H H H H H H\n")
	b.WriteString("11 " + row11 + "\n12-21 S S S S S S S S S S\nsoft 2 3 4 5 6 7 8 9 T A\n")
	for i := 1; i <= 10; i++ {
		b.WriteString("A" + itoa(i) + " S S S S S S S S S S\n")
	}
	b.WriteString("pair A 2 3 4 5 6 7 8 9 10\n")
	for _, p := range []string{"AA", "22", "33", "44", "55", "66", "77", "88", "99", "TT"} {
		b.WriteString(p + " Ph P P P P P P P P S\n")
	}
	b.WriteString(extra)
	return b.String()
}

func itoa(i int) string {
	if i == 10 {
		return "10"
	}
	return string(rune('0' + i))
}

func TestParse(t *testing.T) {
	tab, err := strategy.Parse(strings.NewReader(chartText("D D D D D D D D Ds Ds # a comment", "")))
	require.NoError(t, err)
	// The pair header is in another column order: A first.
	assert.Equal(t, strategy.Split, tab.Decide(two(1, 1, 1)), "Ph with das: yes splits")
	assert.Equal(t, strategy.Stand, tab.Decide(two(2, 2, 10)), "22 vs 10 (last column) is S")
	assert.Equal(t, strategy.Split, tab.Decide(two(2, 2, 2)))
	assert.Equal(t, strategy.Stand, tab.Decide(noDouble(two(6, 5, 10))), "Ds falls back to stand")
	assert.Equal(t, strategy.Hit, tab.Decide(noDouble(two(6, 5, 9))), "D falls back to hit")

	noDAS := strings.Replace(chartText("H H H H H H H H H H", ""), "das: yes", "das: no", 1)
	tab, err = strategy.Parse(strings.NewReader(noDAS))
	require.NoError(t, err)
	assert.Equal(t, strategy.Hit, tab.Decide(two(1, 1, 1)), "Ph without DAS hits")

	withCards := chartText("H H H H H H H H H H", "hard-5 2 3 4 5 6 7 8 9 T A\n12-20 H H H H H H H H H H\nsoft-5 2 3 4 5 6 7 8 9 T A\nA8 H H H H H H H H H H\n")
	tab, err = strategy.Parse(strings.NewReader(withCards))
	require.NoError(t, err)
	assert.Equal(t, strategy.Stand, tab.Decide(cards(10, 10, 2, 2, 2)), "four cards: plain row")
	assert.Equal(t, strategy.Hit, tab.Decide(cards(10, 10, 2, 2, 2, 2)), "five cards: hard-5 row")
	assert.Equal(t, strategy.Hit, tab.Decide(cards(10, 1, 2, 2, 2, 2)), "five-card soft 19: soft-5 row")
	assert.Equal(t, strategy.Stand, tab.Decide(cards(10, 1, 2, 2, 2, 3)), "five-card soft 20: no soft-5 row, plain")
	assert.Equal(t, strategy.Stand, tab.Decide(cards(10, 10, 2, 2, 1, 2, 2)), "six cards: plain row")

	withFree := chartText("H H H H H H H H H H", "free-hard 2 3 4 5 6 7 8 9 T A\n11 D D D D D D D D D D\n")
	tab, err = strategy.Parse(strings.NewReader(withFree))
	require.NoError(t, err)
	assert.Equal(t, strategy.Hit, tab.Decide(two(6, 5, 10)))
	assert.Equal(t, strategy.Double, tab.Decide(free(two(6, 5, 10))))
	assert.Equal(t, strategy.Hit, tab.Decide(free(cards(10, 2, 4, 5))), "three cards: no double, fallback")
}

func TestParseErrors(t *testing.T) {
	full := chartText("H H H H H H H H H H", "")
	tests := []struct {
		name string
		text string
		want error
		line int
	}{
		{"empty", "", strategy.ErrIncomplete, 0},
		{"no name", strings.Replace(full, "name: t\n", "", 1), strategy.ErrIncomplete, 0},
		{"missing soft section", minimal, strategy.ErrSyntax, 7},
		{"missing pair rows", strings.Split(full, "pair ")[0], strategy.ErrIncomplete, 0},
		{"unknown key", "colour: red\n" + full, strategy.ErrSyntax, 1},
		{"bad das", strings.Replace(full, "das: yes", "das: maybe", 1), strategy.ErrSyntax, 2},
		{"row before section", "name: x\n12 H H H H H H H H H H\n", strategy.ErrSyntax, 2},
		{"short header", strings.Replace(full, "hard 2 3 4 5 6 7 8 9 T A", "hard 2 3 4", 1), strategy.ErrSyntax, 3},
		{"repeated column", strings.Replace(full, "hard 2 3 4 5 6 7 8 9 T A", "hard 2 2 4 5 6 7 8 9 T A", 1), strategy.ErrSyntax, 3},
		{"short row", strings.Replace(full, "11 H H H H H H H H H H", "11 H H H", 1), strategy.ErrSyntax, 5},
		{"unknown code", strings.Replace(full, "11 H H H H H H H H H H", "11 H H H X H H H H H H", 1), strategy.ErrBadCode, 5},
		{"split in a hard row", strings.Replace(full, "11 H H H H H H H H H H", "11 H H H P H H H H H H", 1), strategy.ErrBadCode, 0},
		{"bad hard label", strings.Replace(full, "11 H", "3 H", 1), strategy.ErrSyntax, 5},
		{"bad range", strings.Replace(full, "4-10", "10-4", 1), strategy.ErrSyntax, 4},
		{"bad soft label", strings.Replace(full, "A1 S", "A11 S", 1), strategy.ErrSyntax, 8},
		{"bad pair label", strings.Replace(full, "22 Ph", "23 Ph", 1), strategy.ErrSyntax, 0},
		{"repeated row", strings.Replace(full, "A2 S", "A1 S", 1), strategy.ErrSyntax, 9},
		{"repeated section", full + "hard 2 3 4 5 6 7 8 9 T A\n", strategy.ErrSyntax, 29},
		{"bad legend", "legend: T\n" + full, strategy.ErrSyntax, 1},
		{"cards section too small", full + "hard-2 2 3 4 5 6 7 8 9 T A\n", strategy.ErrSyntax, 29},
		{"cards section too big", full + "soft-11 2 3 4 5 6 7 8 9 T A\n", strategy.ErrSyntax, 29},
		{"letter not in legend", "legend: S=S\n" + full, strategy.ErrBadCode, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := strategy.Parse(strings.NewReader(tc.text))
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			var pe *strategy.ParseError
			require.True(t, errors.As(err, &pe), "%v is not a *ParseError", err)
			if tc.line != 0 {
				assert.Equal(t, tc.line, pe.Line, "%v", err)
			}
			assert.True(t, strings.HasPrefix(err.Error(), "strategy: "), err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), "strategy:"), err.Error())
		})
	}
}

func TestNewRejects(t *testing.T) {
	good := strategy.Sisal().Chart()
	tests := []struct {
		name   string
		change func(c *strategy.Chart)
		want   error
	}{
		{"missing cell", func(c *strategy.Chart) { c.Hard[13][4] = strategy.None }, strategy.ErrIncomplete},
		{"partial free row", func(c *strategy.Chart) { c.FreeHard[10][4] = strategy.CodeDouble }, strategy.ErrIncomplete},
		{"split in soft row", func(c *strategy.Chart) { c.Soft[13][4] = strategy.CodeSplit }, strategy.ErrBadCode},
		{"cell outside the rows", func(c *strategy.Chart) { c.Hard[2][4] = strategy.CodeHit }, strategy.ErrBadCode},
		{"up card zero", func(c *strategy.Chart) { c.Pair[3][0] = strategy.CodeHit }, strategy.ErrBadCode},
		{"partial cards row", func(c *strategy.Chart) { c.CardsHard[5][14][3] = strategy.CodeHit }, strategy.ErrIncomplete},
		{"cards row for two cards", func(c *strategy.Chart) { c.CardsHard[2][14][3] = strategy.CodeHit }, strategy.ErrBadCode},
		{"soft cards row below 12", func(c *strategy.Chart) { c.CardsSoft[4][11][3] = strategy.CodeHit }, strategy.ErrBadCode},
		{"split in a cards row", func(c *strategy.Chart) {
			for up := 1; up <= 10; up++ {
				c.CardsHard[4][14][up] = strategy.CodeSplit
			}
		}, strategy.ErrBadCode},
		{"unknown code", func(c *strategy.Chart) { c.Pair[3][3] = strategy.Code(40) }, strategy.ErrBadCode},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.change(&c)
			_, err := strategy.New(c)
			assert.ErrorIs(t, err, tc.want)
		})
	}
	_, err := strategy.New(good)
	assert.NoError(t, err)
}

func TestForGameUnknown(t *testing.T) {
	for _, code := range []string{"", "005", "004-auto", "../data/004"} {
		_, err := strategy.ForGame(code)
		assert.ErrorIs(t, err, strategy.ErrUnknownGame, code)
	}
}

func TestCodeStrings(t *testing.T) {
	for c := strategy.CodeHit; c <= strategy.CodeSplitH; c++ {
		back, err := strategy.ParseCode(c.String())
		require.NoError(t, err)
		assert.Equal(t, c, back)
	}
	assert.Equal(t, "Code(99)", strategy.Code(99).String())
	_, err := strategy.ParseCode("-")
	assert.ErrorIs(t, err, strategy.ErrBadCode)
}
