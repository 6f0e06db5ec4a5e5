package strategy_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/livetable/livetable/table/strategy"
)

// The engine builds a Situation from the hand and the rules, then asks the
// game's table.
func ExampleTable_Decide() {
	tab, err := strategy.ForGame("000")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := strategy.HandSituation([]int{8, 8}, 9) // 8,8 against a 9
	s.CanDouble, s.CanSplit = true, true
	fmt.Println(tab.Decide(s))
	s.CanSplit = false // already split once: play the hard 16
	fmt.Println(tab.Decide(s))
	// Output:
	// split
	// hit
}

// A pending Sisal hand is finished with the no-double, no-split table.
func ExampleSisalNoDoubleNoSplit() {
	s := strategy.HandSituation([]int{6, 5}, 6) // 11 against a 6
	s.CanDouble = true
	fmt.Println(strategy.Sisal().Decide(s), strategy.SisalNoDoubleNoSplit().Decide(s))
	// Output: double hit
}

func ExampleParse() {
	text := `name: mini
das: no
hard  2 3 4 5 6 7 8 9 T A
4-11  H H H H H H H H H H
12-16 S S S S S H H H H H
17-21 S S S S S S S S S S
soft  2 3 4 5 6 7 8 9 T A
A1-A6 H H H H H H H H H H
`
	_, err := strategy.Parse(strings.NewReader(text))
	fmt.Println(err)
	// Output: strategy: line 8: syntax error: bad row label "A1-A6"
}

func ExampleFormat() {
	c := strategy.SisalNoDoubleNoSplit().Chart()
	c.Notes = []string{"a copy of the Sisal no-double table"}
	t, err := strategy.New(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	var b strings.Builder
	if err := strategy.Format(&b, t); err != nil {
		fmt.Println(err)
		return
	}
	lines := strings.Split(b.String(), "\n")
	fmt.Fprintln(os.Stdout, strings.Join(lines[:6], "\n"))
	// Output:
	// # a copy of the Sisal no-double table
	// name: 004-auto
	// das: yes
	//
	// hard      2  3  4  5  6  7  8  9  T  A
	// 4         H  H  H  H  H  H  H  H  H  H
}
