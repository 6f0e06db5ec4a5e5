package strategy_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/strategy"
)

// seedPath is the Sisal rules document, in the shared/ folder that sits
// beside the repository (as in CI and on the developers' machines).
var seedPath = filepath.Join("..", "..", "..", "shared", "seeds", "004_84c2865e7caf6a5d.txt")

func seedLines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(seedPath)
	if os.IsNotExist(err) {
		t.Skipf("seed document not found at %s", seedPath)
	}
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	return lines
}

// seedRow names a printed row: its line in the seed and the Situation of a
// two-card hand on that row (Decide on it is what the printed cell says).
type seedRow struct {
	line   int
	v1, v2 int // a hand of that row
}

// The printed rows of the first table, with a representative hand each
// (pairs as pairs, so the pair row is read).
var printedRows = []seedRow{
	{186, 3, 5}, {187, 4, 5}, {188, 4, 6}, {189, 5, 6}, {190, 10, 2}, {191, 10, 3},
	{192, 10, 4}, {193, 10, 5}, {194, 10, 6}, {195, 10, 7}, {196, 10, 8}, {197, 10, 9},
	// Hard 21 has no two-card hand: row 199 is checked with three cards below.
	{201, 1, 2}, {202, 1, 3}, {203, 1, 4}, {204, 1, 5}, {205, 1, 6}, {206, 1, 7},
	{208, 1, 8}, {225, 1, 9},
	{226, 2, 2}, {227, 3, 3}, {228, 4, 4}, {229, 5, 5}, {230, 6, 6}, {231, 7, 7},
	{232, 8, 8}, {233, 9, 9}, {234, 10, 10}, {235, 1, 1},
}

// printedAction maps the document's letters to the action of a fresh
// two-card hand where everything is allowed.
var printedAction = map[string]strategy.Action{
	"T": strategy.Hit, "S": strategy.Stand, "R": strategy.Double, "D": strategy.Split,
}

// TestSisalMatchesSeed reads the printed cells from the seed itself and
// checks that Sisal() decides each of them the same way.
func TestSisalMatchesSeed(t *testing.T) {
	lines := seedLines(t)
	tab := strategy.Sisal()
	check := func(line int, s func(up int) strategy.Situation) {
		fields := strings.Fields(lines[line-1])
		require.Len(t, fields, 11, "seed line %d: %q", line, lines[line-1])
		for i, f := range fields[1:] {
			up := columnUp(i)
			want, ok := printedAction[f]
			require.True(t, ok, "seed line %d: letter %q", line, f)
			assert.Equal(t, want, tab.Decide(s(up)), "seed line %d (%s) vs %d", line, fields[0], up)
		}
	}
	for _, r := range printedRows {
		check(r.line, func(up int) strategy.Situation { return two(r.v1, r.v2, up) })
	}
	check(199, func(up int) strategy.Situation { return cards(up, 10, 4, 7) })
	check(198, func(up int) strategy.Situation { return cards(up, 10, 4, 6) })
	check(186, func(up int) strategy.Situation { return cards(up, 2, 2) })
}

// columnUp is the up card of the i-th printed column: 2..9, 10, A.
func columnUp(i int) int {
	if i == 9 {
		return 1
	}
	return i + 2
}

// TestSisalAutoMatchesSeed checks the second (no double, no split) table
// against the seed. Its scan is noisy ("1T", "§$", a trailing "TT" for two
// columns): each mark is read as T or S, and a row where a column was lost
// is compared by its runs of T and S.
func TestSisalAutoMatchesSeed(t *testing.T) {
	lines := seedLines(t)
	tab := strategy.SisalNoDoubleNoSplit()
	rows := []seedRow{
		{277, 3, 5}, {278, 4, 5}, {279, 4, 6}, {280, 5, 6}, {281, 10, 2}, {282, 10, 3},
		{283, 10, 4}, {284, 10, 5}, {285, 10, 6}, {286, 10, 7}, {287, 10, 8}, {288, 10, 9},
		{291, 1, 2}, {292, 1, 3}, {293, 1, 4}, {294, 1, 5}, {295, 1, 6}, {296, 1, 7},
		{298, 1, 8}, {309, 1, 9},
		{310, 2, 2}, {311, 3, 3}, {312, 4, 4}, {313, 5, 5}, {314, 6, 6}, {315, 7, 7},
		{316, 8, 8}, {317, 9, 9}, {318, 10, 10}, {319, 1, 1},
	}
	for _, r := range rows {
		var cols []byte
		for _, f := range strings.Fields(lines[r.line-1])[1:] {
			switch {
			case f == "TT" || f == "SS":
				cols = append(cols, f[0], f[1])
			case strings.ContainsRune(f, 'T'):
				cols = append(cols, 'T')
			case strings.ContainsAny(f, "Ss$"):
				cols = append(cols, 'S')
			}
		}
		var got []byte
		for i := range 10 {
			letter := byte('S')
			if tab.Decide(two(r.v1, r.v2, columnUp(i))) == strategy.Hit {
				letter = 'T'
			}
			got = append(got, letter)
		}
		seed := cols
		if len(cols) != 10 {
			// A column was lost in the scan: compare the runs only.
			seed, got = runs(cols), runs(got)
		}
		assert.Equal(t, string(seed), string(got), "seed line %d: %q", r.line, lines[r.line-1])
	}
}

// runs collapses repeated letters: "TTSSST" -> "TST".
func runs(b []byte) []byte {
	var out []byte
	for _, c := range b {
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}
