package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// journalFlags are the flags of the commands that read a table's journal.
type journalFlags struct {
	dataDir string
	game    string
}

func (jf *journalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&jf.dataDir, "data-dir", "var/table1", "the table's data directory (tabled --data-dir)")
	fs.StringVar(&jf.game, "game", "000", "the table's game code")
}

func (jf *journalFlags) dir() string { return filepath.Join(jf.dataDir, "journal") }

// runJournal: `tablectl journal verify`.
func runJournal(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: tablectl journal verify [--data-dir DIR]")
		return 2
	}
	fs := flag.NewFlagSet("tablectl journal verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var jf journalFlags
	jf.register(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	rep, err := journal.Verify(jf.dir())
	fmt.Fprintf(stdout, "journal %s: %d segment(s), records %d..%d (%d)\n", jf.dir(), rep.Segments, rep.FirstSeq, rep.LastSeq, rep.Records)
	fmt.Fprintf(stdout, "chain anchor %s\nlast hash    %s\n", rep.Anchor, rep.LastHash)
	if err != nil {
		if errors.Is(err, journal.ErrTornTail) {
			fmt.Fprintf(stdout, "torn tail (a power cut mid-write; tabled cuts it back on start): %v\n", err)
			return 0
		}
		fmt.Fprintf(stdout, "FAILED: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "OK: every checksum and the hash chain verify")
	return 0
}

// recall replays a stopped table's journal into a history.
func recall(jf journalFlags) (*table.History, error) {
	rs, err := rules.Game(jf.game)
	if err != nil {
		return nil, err
	}
	jopts := journal.DefaultOptions()
	jopts.Dir = jf.dir()
	jopts.ReadOnly = true // no lock: a running table's journal can be read
	j, _, err := journal.Open(jopts, zerolog.Nop())
	if err != nil {
		return nil, fmt.Errorf("open the journal %s: %w", jf.dir(), err)
	}
	defer j.Close()
	h := table.NewHistory(1 << 20)
	opts := table.DefaultOptions(rs)
	opts.Journal = table.NewJournal(j)
	if err := table.ReplayEvents(opts, h.Add); err != nil {
		return nil, err
	}
	return h, nil
}

// runHistory: `tablectl history`: recent rounds by game code with result.
func runHistory(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tablectl history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var jf journalFlags
	jf.register(fs)
	n := fs.Int("n", 20, "rounds to list")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	h, err := recall(jf)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%-12s %-20s %-8s %8s  %s\n", "round", "start (GMT)", "result", "net", "dealer")
	for _, r := range h.Recent(*n) {
		result, net, dealer := "open", "", ""
		if s := r.Settlement; s != nil {
			result = "settled"
			if s.Void {
				result = "void"
			}
			net = fmt.Sprintf("%+d", s.Net)
			dealer = fmt.Sprintf("%s = %d", cardsText(s.Dealer.Cards), s.Dealer.Total)
		}
		fmt.Fprintf(stdout, "%-12s %-20s %-8s %8s  %s\n", r.Code, r.Start.UTC().Format("2006-01-02 15:04:05"), result, net, dealer)
	}
	return 0
}

// runRound: `tablectl round CODE`: one round in full.
func runRound(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tablectl round", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var jf journalFlags
	jf.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: tablectl round [flags] '#HH:MM:SS'")
		return 2
	}
	h, err := recall(jf)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	code := fs.Arg(0)
	if !strings.HasPrefix(code, "#") {
		code = "#" + code
	}
	r, err := h.Round(code)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	printRound(stdout, r)
	return 0
}

func printRound(w io.Writer, r table.RoundRecord) {
	fmt.Fprintf(w, "round %s, started %s GMT\n", r.Code, r.Start.UTC().Format("2006-01-02 15:04:05.000"))
	for _, ev := range r.Events {
		var text string
		switch b := ev.Body.(type) {
		case round.Event:
			if b.Type == round.EvSettled {
				continue
			}
			text = b.String()
		case table.PhaseChanged:
			text = "phase " + string(b.Phase)
		case table.Alarm:
			text = "ALARM " + b.Code + ": " + b.Message
		case table.Paused:
			text = "paused by " + b.By + ": " + b.Reason
		case table.Resumed:
			text = "resumed by " + b.By
		default:
			text = ev.Kind()
		}
		fmt.Fprintf(w, "  %s  #%-6d %s\n", ev.Time.UTC().Format(time.TimeOnly+".000"), ev.Seq, text)
	}
	s := r.Settlement
	if s == nil {
		fmt.Fprintln(w, "  (not settled)")
		return
	}
	if s.Void {
		fmt.Fprintf(w, "VOID (%s): every initial wager returned\n", s.Reason)
	}
	fmt.Fprintf(w, "dealer %s = %d%s\n", cardsText(s.Dealer.Cards), s.Dealer.Total, flags(s.Dealer.Blackjack, " blackjack", s.Dealer.Bust, " bust"))
	for _, st := range s.Seats {
		who := st.Player
		if st.Behind {
			who += " (behind)"
		}
		fmt.Fprintf(w, "seat %d %s\n", st.Seat, who)
		for i, hr := range st.Hands {
			fmt.Fprintf(w, "  hand %d  %-24s %2d  stake %7d  free %6d  %-9s %+8d\n", i+1, cardsText(hr.Cards), hr.Total, hr.Stake, hr.Free, hr.Outcome, hr.Net)
		}
		for _, sd := range st.Side {
			fmt.Fprintf(w, "  side %-14s stake %7d  %-22s %+8d\n", sd.Kind, sd.Stake, sd.Result, sd.Net)
		}
		if st.Insurance != nil {
			fmt.Fprintf(w, "  insurance           stake %7d  %+31d\n", st.Insurance.Stake, st.Insurance.Net)
		}
		fmt.Fprintf(w, "  total net %+d\n", st.Net)
	}
}

func flags(a bool, as string, b bool, bs string) string {
	out := ""
	if a {
		out += as
	}
	if b {
		out += bs
	}
	return out
}
