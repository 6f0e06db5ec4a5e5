// Package strategy holds blackjack basic-strategy tables as data and decides
// a hand's action from them.
//
// # Tables
//
// A Chart is the editable form of a table: a hard section (totals 4..21), a
// soft section (soft totals 12..21), a pair section (pair values A..T) and,
// for Free Bet (002), optional free-hard and free-pair rows used when the
// double or split on offer is free, and optional rows for hands of a given
// number of cards. Every cell is a Code such as "H", "S",
// "D" (double, else hit), "Ds" (double, else stand), "P" (split) or "Ph"
// (split when the chart allows doubling after a split, else hit). New
// compiles a Chart into a Table, a dense array lookup that Decide reads
// without allocating: the RTP simulator calls it millions of times a second.
//
// # Text format
//
// Parse and Format read and write a text form that looks like the printed
// charts, one row per line and one column per dealer up card:
//
//	name: 000
//	das: no
//	hard  2  3  4  5  6  7  8  9  T  A
//	4     H  H  H  H  H  H  H  H  H  H
//	...
//	soft  2  3  4  5  6  7  8  9  T  A
//	A2    H  H  H  D  D  H  H  H  H  H
//	...
//	pair  2  3  4  5  6  7  8  9  T  A
//	AA    P  P  P  P  P  P  P  P  P  P
//
// Soft rows are labelled A1 (two aces, soft 12) to A10 (soft 21); hard rows
// by total, or a range like "4-8"; pair rows AA, 22 .. 99, TT. Optional
// sections "hard-N" and "soft-N" (N = 3..10) hold rows for hands of exactly
// N cards, read before the plain rows: games with a charlie (001, 003 ten
// cards, 002 six cards) hit more with one or two cards to go. A "legend:"
// line maps the letters of a printed chart to codes, so a transcription can
// keep the document's own letters (the Sisal charts use T/S/R/D).
//
// # Using a table
//
// The engine fills a Situation per decision (SituationOf does the totals
// from the cards) and sets what the rules allow now: CanDouble on two
// cards (after a split only with DAS: 001, 003, 004), CanSplit on an
// unsplit pair (one split per hand), and in Free Bet (002) FreeDouble on a
// two-card hard 9-11 and FreeSplit on a non-ten pair. Decide never returns
// an action the Situation forbids. The Sisal no-double table is used to
// finish a pending 004 hand; it never doubles or splits whatever is allowed.
//
// # Games
//
// ForGame returns the table the simulator plays for each game: the two
// printed Sisal charts (004) are transcribed from the seed document, and
// the tables of 000-003 are computed by the EV calculator in
// internal/ev and committed as generated files under data/ (regenerate with
// cmd/genstrategy; a test checks they are current).
//
// # Returns
//
// Expected RTP of a whole hand played with each table, computed by the same
// calculator on the finite shoe (go run ./table/strategy/cmd/genstrategy
// -report), with the document's figure where it states one:
//
//	000  99.292%  (stated 99.28%)
//	001  99.511%  (stated 95.38% is the 21+3 side bet, not the main game)
//	002  98.441%  (stated 98.45%)
//	003  99.279%  (stated 99.55%, not reachable with H17; see variants.md)
//	004  99.361%  (stated 99.36%, printed table); 97.571% with the no-double table
package strategy
