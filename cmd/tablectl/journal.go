package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/continuity"
	"github.com/livetable/livetable/table/identity"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

// journalFlags are the flags of the commands that read a table's journal.
// Their defaults come from the globals (--config, else var/demo).
type journalFlags struct {
	dataDir string
	game    string
	config  string // read by loadGlobals already; accepted here after the command
	// id is the identity the data directory records (zero when none).
	id identity.Identity
}

func (jf *journalFlags) register(fs *flag.FlagSet, g *globals) {
	fs.StringVar(&jf.config, "config", g.config, "tabled's configuration file: tablectl takes its defaults from it")
	fs.StringVar(&jf.dataDir, "data-dir", g.dataDir, "the table's data directory (tabled --data-dir; default: the config's data_dir, else "+defaultDataDir+", where make run writes)")
	fs.StringVar(&jf.game, "game", g.cfg.Game, "the table's game code (default: the one the data directory records, else the config's)")
}

// parse parses a journal command's arguments (parseCmd), then takes the
// game from the data directory's identity (table/identity): its journal
// replays only under the rules it was played with. A game given with
// --game, or a table and game given by --config, that are not the
// directory's is an error (tabled refuses that directory too).
func (jf *journalFlags) parse(fs *flag.FlagSet, g *globals, args []string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	if pos, code, ok = parseCmd(fs, args, stdout, stderr); !ok {
		return pos, code, ok
	}
	id, recorded, err := identity.Read(nil, jf.dataDir)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return nil, 1, false
	}
	if !recorded {
		return pos, 0, true
	}
	claimed := identity.Identity{Studio: id.Studio, Table: id.Table, Game: jf.game}
	if g.config != "" {
		claimed.Studio, claimed.Table = g.cfg.Studio, g.cfg.Table
	} else {
		gameFlag := false
		fs.Visit(func(f *flag.Flag) { gameFlag = gameFlag || f.Name == "game" })
		if !gameFlag {
			claimed.Game = id.Game
		}
	}
	if claimed != id {
		fmt.Fprintln(stderr, "tablectl:", &identity.MismatchError{Dir: jf.dataDir, Recorded: id, Configured: claimed})
		return nil, 1, false
	}
	jf.game, jf.id = id.Game, id
	return pos, 0, true
}

func (jf *journalFlags) dir() string { return filepath.Join(jf.dataDir, "journal") }

// runJournal: `tablectl journal verify` and `tablectl journal accept-loss`.
func runJournal(g *globals, args []string, stdout, stderr io.Writer) int {
	const usage = "usage: tablectl journal verify [--data-dir DIR] [--game G] [--broker URL [--user U --password P --ca-file F --cert-file F --key-file F]]\n" +
		"       tablectl journal accept-loss --data-dir DIR --by NAME --reason WHY [--published-seq N | --broker URL [--user U ...]] [--game G]\n" +
		"       tablectl journal salvage --data-dir DIR --by NAME --reason WHY [--game G]"
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "verify":
		return runVerify(g, args[1:], stdout, stderr)
	case "accept-loss":
		return runAcceptLoss(g, args[1:], stdout, stderr)
	case "salvage":
		return runSalvage(g, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return 0
	}
	fmt.Fprintln(stderr, usage)
	return 2
}

// runVerify checks the journal's records and hash chain, then its
// continuity with the outbox in the same data directory: a journal whose
// events end before what the outbox published fails, naming the gap.
// With --broker it also reads the table's retained state at the broker
// (mqttlink.BrokerPublishedSeq, as tabled does at start): a whole data
// directory restored from an older backup has a journal and an outbox
// that agree, and only the broker knows the seqs published since.
func runVerify(g *globals, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("journal verify", "[flags]", nil)
	var jf journalFlags
	jf.register(fs, g)
	var rf remoteFlags
	rf.register(fs, g)
	fs.Lookup("broker").Usage = "also check the journal against the seq the table's retained state at this broker names (tcp://, ssl://; the nodes of a cluster comma-separated): a data directory restored whole from an older backup fails"
	if _, code, ok := jf.parse(fs, g, args, stdout, stderr); !ok {
		return code
	}
	rf.parsed(fs)
	rep, err := journal.Verify(jf.dir())
	fmt.Fprintf(stdout, "journal %s: %d segment(s), records %d..%d (%d)\n", jf.dir(), rep.Segments, rep.FirstSeq, rep.LastSeq, rep.Records)
	fmt.Fprintf(stdout, "chain anchor %s\nlast hash    %s\n", rep.Anchor, rep.LastHash)
	fmt.Fprintf(stdout, "trailers: %d sealed segment(s) match their trailer, %d sealed before trailers\n", rep.Trailers, rep.Untrailed)
	for _, bt := range rep.BadTrailers {
		// No record is lost; tabled reads such a segment record by record.
		fmt.Fprintf(stdout, "WARNING: trailer not usable: %s (no record is lost: tabled checks that segment record by record at start, as verify did; nothing to do)\n", bt)
	}
	switch {
	case errors.Is(err, journal.ErrTornTail):
		fmt.Fprintf(stdout, "torn tail (a power cut mid-write; tabled cuts it back on start): %v\n", err)
	case err != nil:
		fmt.Fprintf(stdout, "FAILED: %v\n", err)
		return 1
	default:
		fmt.Fprintln(stdout, "OK: every checksum and the hash chain verify")
	}
	n, err := continuityNumbers(jf)
	if err != nil {
		fmt.Fprintf(stdout, "FAILED: continuity with the outbox not checked: %v\n", err)
		return 1
	}
	if rf.brokerSet {
		if n.Broker, err = verifyBrokerSeq(&rf, fs, jf, stdout); err != nil {
			fmt.Fprintf(stdout, "FAILED: continuity with the broker not checked: %v\n", err)
			return 1
		}
	}
	from, to, behind := n.Lost()
	if !behind {
		fmt.Fprintf(stdout, "OK: the journal's events end at seq %d, the outbox published up to seq %d\n", n.Journal, n.Outbox)
		if rf.brokerSet {
			fmt.Fprintf(stdout, "OK: the journal is not behind the broker, whose retained state names seq %d\n", n.Broker)
		} else {
			// A directory restored whole from an older backup passes
			// the lines above: only the broker knows what came after.
			fmt.Fprintln(stdout, "not checked against the broker: before starting a restored directory, run this again with --broker URL")
		}
		return 0
	}
	fmt.Fprintf(stdout, "FAILED: %v\n", &continuity.GapError{Numbers: n})
	accepted, err := continuity.Acceptances(nil, continuity.AcceptPath(jf.dataDir))
	if err != nil {
		fmt.Fprintf(stdout, "acceptances not read: %v\n", err)
		return 1
	}
	if gap, _ := continuity.Resolve(n, accepted); gap != nil {
		fmt.Fprintf(stdout, "the loss of events %d-%d was accepted by %s (%s): tabled journals it at its next start and starts paused\n",
			from, to, gap.By, gap.Reason)
	}
	return 1
}

// runAcceptLoss records an operator's acceptance of the events lost from
// the journal (see table/continuity), after which tabled starts: paused,
// numbering above every published seq, with an alarm naming the seqs lost.
func runAcceptLoss(g *globals, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("journal accept-loss", "--by NAME --reason WHY [flags]", nil)
	var jf journalFlags
	jf.register(fs, g)
	by := fs.String("by", "", "who accepts the loss (required)")
	reason := fs.String("reason", "", "why (required; it is journaled and published with the alarm)")
	published := fs.Uint64("published-seq", 0, "the seq the table's retained state at the broker names, when tabled refused to start naming it (a data directory restored from an older backup); with --broker it must be the seq the broker names")
	var rf remoteFlags
	rf.register(fs, g)
	fs.Lookup("broker").Usage = "read the seq the table's retained state at this broker names (tcp://, ssl://; the nodes of a cluster comma-separated) instead of taking --published-seq on trust"
	if _, code, ok := jf.parse(fs, g, args, stdout, stderr); !ok {
		return code
	}
	rf.parsed(fs)
	if *by == "" || *reason == "" {
		fmt.Fprintln(stderr, "tablectl journal accept-loss: --by and --reason are required")
		return 2
	}
	n, err := continuityNumbers(jf)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	n.Broker = *published
	if rf.brokerSet {
		// An accepted loss numbers the table's events above it for
		// good: a mistyped --published-seq would announce thousands of
		// events lost that never existed, so the broker is asked.
		seq, err := verifyBrokerSeq(&rf, fs, jf, stdout)
		if err != nil {
			fmt.Fprintln(stderr, "tablectl: the broker's seq not read:", err)
			return 1
		}
		if *published != 0 && *published != seq {
			fmt.Fprintf(stderr, "tablectl: --published-seq %d is not the seq the table's retained state at %s names (%d): nothing accepted\n", *published, rf.broker, seq)
			return 1
		}
		n.Broker = seq
	} else if *published != 0 {
		fmt.Fprintf(stdout, "--published-seq %d is taken as given (--broker URL reads it from the table's retained state instead)\n", *published)
	}
	from, to, behind := n.Lost()
	if !behind {
		fmt.Fprintf(stdout, "nothing to accept: the journal's events end at seq %d, the outbox published up to seq %d\n", n.Journal, n.Published())
		return 1
	}
	a := continuity.Acceptance{LostFrom: from, LostTo: to, By: *by, Reason: *reason, At: time.Now().UTC(), FromBroker: n.Broker > n.Outbox}
	err = continuity.Accept(nil, continuity.AcceptPath(jf.dataDir), a)
	if err == nil {
		err = giveToDirOwner(continuity.AcceptPath(jf.dataDir))
	}
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	fmt.Fprintf(stdout, "accepted: events %d-%d lost from the journal (by %s: %s), recorded in %s\n"+
		"tabled will journal the loss at its next start, number events from %d and start paused with an alarm\n"+
		"the commands applied in the lost stretch are forgotten with it: a command saying seen %d or less is refused (stale);\n"+
		"one without seen, sent again, is applied anew: before resuming, make sure the backend sends seen or stopped retrying (docs/deploy.md, restore)\n",
		from, to, *by, *reason, continuity.AcceptPath(jf.dataDir), to+1, to)
	return 0
}

// runSalvage makes a journal damaged anywhere but at its tail open again
// (journal.Salvage): tabled refuses such a journal at start, naming the
// damage, and before this the only way back was an older backup, which
// loses more. What leaves the journal is moved into a new directory
// beside it, never deleted. It then says whether tabled will start as it
// is or refuse until the loss is accepted (accept-loss).
func runSalvage(g *globals, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("journal salvage", "--by NAME --reason WHY [flags]", nil)
	var jf journalFlags
	jf.register(fs, g)
	by := fs.String("by", "", "who salvages the journal (required)")
	reason := fs.String("reason", "", "why (required; written beside what is moved aside)")
	if _, code, ok := jf.parse(fs, g, args, stdout, stderr); !ok {
		return code
	}
	if *by == "" || *reason == "" {
		fmt.Fprintln(stderr, "tablectl journal salvage: --by and --reason are required")
		return 2
	}
	at := time.Now().UTC()
	q := filepath.Join(jf.dataDir, "journal-salvaged-"+at.Format("20060102T150405Z"))
	for i := 2; ; i++ {
		// A new directory each time: a second salvage in the same
		// second must not replace what the first moved aside.
		if _, err := os.Stat(q); os.IsNotExist(err) {
			break
		}
		q = filepath.Join(jf.dataDir, fmt.Sprintf("journal-salvaged-%s-%d", at.Format("20060102T150405Z"), i))
	}
	rep, err := journal.Salvage(nil, jf.dir(), q, table.CheckpointKind)
	switch {
	case errors.Is(err, journal.ErrLocked):
		fmt.Fprintf(stderr, "tablectl: %v: stop the table first (systemctl stop tabled@<table>)\n", err)
		return 1
	case errors.Is(err, journal.ErrNothingToSalvage) && rep.TornTail:
		fmt.Fprintf(stdout, "nothing to salvage: only a torn tail (%v), which tabled cuts at start\n", rep.Damage)
		return 0
	case errors.Is(err, journal.ErrNothingToSalvage):
		fmt.Fprintln(stdout, "nothing to salvage: every checksum and the hash chain verify")
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	fmt.Fprintf(stdout, "damage: %v\n", rep.Damage)
	moved := strings.Join(rep.Moved, " ")
	if rep.Cut != "" {
		moved = strings.TrimSpace(moved + " " + rep.Cut + " (whole; the journal keeps its first " + fmt.Sprint(rep.CutAt) + " bytes)")
	}
	fmt.Fprintf(stdout, "moved to %s: %s\n", q, moved)
	note := fmt.Sprintf("salvaged %s by %s: %s\ndamage: %v\nmoved: %s\njournal now holds records %d..%d\n",
		at.Format(time.RFC3339), *by, *reason, rep.Damage, moved, rep.FirstSeq, rep.LastSeq)
	if err := writeNote(filepath.Join(q, "SALVAGE.txt"), note); err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	for _, p := range []string{q, filepath.Join(q, "SALVAGE.txt"), filepath.Join(jf.dir(), rep.Cut)} {
		if p == jf.dir() {
			continue // no segment cut
		}
		// tabled runs as the directory's owner and appends to a cut
		// segment: tablectl as root gives it back.
		if err := giveToDirOwner(p); err != nil {
			fmt.Fprintln(stderr, "tablectl:", err)
			return 1
		}
	}
	if rep.HeadDropped {
		fmt.Fprintf(stdout, "the journal now holds records %d..%d, from a checkpoint on: the table's state and event numbers lose nothing; "+
			"the rounds before it are only in %s now (not in game recall)\n", rep.FirstSeq, rep.LastSeq, q)
	} else {
		fmt.Fprintf(stdout, "the journal was cut at the damage: it now holds records %d..%d\n", rep.FirstSeq, rep.LastSeq)
	}
	n, err := continuityNumbers(jf)
	if err != nil {
		fmt.Fprintf(stdout, "continuity with the outbox not checked: %v\n", err)
		return 1
	}
	if from, to, behind := n.Lost(); behind {
		fmt.Fprintf(stdout, "events %d-%d the outbox published are lost from the journal: tabled refuses to start until the loss is accepted:\n"+
			"  tablectl journal accept-loss --data-dir %s --by %s --reason %q\n", from, to, jf.dataDir, *by, *reason)
		return 0
	}
	fmt.Fprintf(stdout, "the journal's events end at seq %d, the outbox published up to seq %d: start tabled "+
		"(it still checks the broker's retained state; `tablectl journal verify --broker URL` checks it now)\n", n.Journal, n.Outbox)
	return 0
}

// writeNote writes a new small text file, fsync'd.
func writeNote(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// continuityNumbers reads, without changing anything, the seq of the last
// event the journal derives and the highest seq the outbox holds.
func continuityNumbers(jf journalFlags) (continuity.Numbers, error) {
	var n continuity.Numbers
	rs, err := rules.Game(jf.game)
	if err != nil {
		return n, err
	}
	if n.Outbox, err = mqttlink.OutboxPublishedSeq(nil, filepath.Join(jf.dataDir, "outbox")); err != nil {
		return n, err
	}
	j, err := table.OpenForHistory(jf.dir(), zerolog.Nop())
	if err != nil {
		return n, err
	}
	defer j.Close()
	opts := table.DefaultOptions(rs)
	opts.Journal = table.NewJournal(j)
	if n.Journal, err = table.LastEventSeq(opts); err != nil {
		return n, fmt.Errorf("replay the journal %s: %w", jf.dir(), err)
	}
	return n, nil
}

// recall replays a table's journal (read-only: the table may be running)
// into game recall, the same History the console keeps. from picks the
// rounds to read from the journal's round index (nil: every round); the
// replay then starts at the checkpoint before the first of them.
func recall(jf journalFlags, from func([]journal.RoundSummary) uint64, keep ...func(table.Event) bool) (*console.History, error) {
	rs, err := rules.Game(jf.game)
	if err != nil {
		return nil, err
	}
	j, err := table.OpenForHistory(jf.dir(), zerolog.Nop()) // a running table's journal can be read
	if err != nil {
		return nil, err
	}
	defer j.Close()
	h := console.NewHistory(1 << 20)
	opts := table.DefaultOptions(rs)
	opts.Journal = table.NewJournal(j)
	seq := uint64(0)
	if from != nil {
		seq = from(j.Rounds(1 << 30))
	}
	add := h.Add
	if len(keep) > 0 {
		add = func(ev table.Event) {
			if keep[0](ev) {
				h.Add(ev)
			}
		}
	}
	if err := table.ReplayEventsFrom(opts, seq, add); err != nil {
		return nil, err
	}
	return h, nil
}

// runHistory: `tablectl history`: recent rounds by game code with result.
func runHistory(g *globals, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("history", "[-n 20]", nil)
	var jf journalFlags
	jf.register(fs, g)
	n := fs.Int("n", 20, "rounds to list")
	if _, code, ok := jf.parse(fs, g, args, stdout, stderr); !ok {
		return code
	}
	if *n < 1 {
		fmt.Fprintf(stderr, "tablectl history: -n %d: at least 1\n", *n) // -1 panicked (makeslice)
		return 2
	}
	h, err := recall(jf, func(rs []journal.RoundSummary) uint64 {
		// Newest first: the first record of the n-th newest round.
		if len(rs) == 0 || *n <= 0 {
			return 0
		}
		return rs[min(*n, len(rs))-1].FirstSeq
	})
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	rounds, err := h.Recent(*n)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%-12s %-20s %-8s %8s  %s\n", "round", "start (GMT)", "result", "net", "cards")
	for _, r := range rounds {
		result, net := "open", ""
		if r.Settled {
			result, net = "settled", fmt.Sprintf("%+d", r.Net)
			if r.Void {
				result = "void"
			}
		}
		fmt.Fprintf(stdout, "%-12s %-20s %-8s %8s  %s\n", r.Code, r.Start.UTC().Format("2006-01-02 15:04:05"), result, net, cardsText(r.Cards))
	}
	return 0
}

// runRound: `tablectl round CODE`: one round in full. Round codes are the
// round's start time of day (GMT), so the same code comes back every day:
// '#2026-11-24 07:35:00' or --date 2026-11-24 picks the day; without a
// date the latest round with the code is shown.
func runRound(g *globals, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("round", "[flags] '#HH:MM:SS' | '#YYYY-MM-DD HH:MM:SS'", nil)
	var jf journalFlags
	jf.register(fs, g)
	dateText := fs.String("date", "", "the round's day (GMT), YYYY-MM-DD; default the latest round with the code")
	pos, code, ok := jf.parse(fs, g, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) == 0 || len(pos) > 2 {
		fmt.Fprintln(stderr, "usage: tablectl round [flags] '#HH:MM:SS' | '#YYYY-MM-DD HH:MM:SS'")
		return 2
	}
	rc, day, err := roundCode(strings.Join(pos, " "), *dateText)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl round:", err)
		return 2
	}
	var chosen *journal.RoundSummary
	h, err := recall(jf, func(rs []journal.RoundSummary) uint64 {
		for i := range rs { // newest first: the latest round with this code (on that day)
			if rs[i].Code == rc && (day == "" || rs[i].Start.UTC().Format(time.DateOnly) == day) {
				chosen = &rs[i]
				return rs[i].FirstSeq
			}
		}
		return 0
	}, func(ev table.Event) bool {
		// A later day's round with the same code is not this one.
		return chosen == nil || ev.Round != rc || ev.Time.UTC().Format(time.DateOnly) == chosen.Start.UTC().Format(time.DateOnly)
	})
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	if chosen == nil && day != "" {
		fmt.Fprintf(stderr, "tablectl: no round %s on %s in the journal\n", rc, day)
		return 1
	}
	r, err := h.Round(rc)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 1
	}
	printRound(stdout, r)
	return 0
}

// roundCode splits '#2026-11-24 07:35:00' (or '07:35:00' with a --date)
// into the round code '#07:35:00' and the day '2026-11-24' ("" for any).
func roundCode(arg, date string) (code, day string, err error) {
	arg = strings.TrimPrefix(strings.TrimSpace(arg), "#")
	if d, t, ok := strings.Cut(arg, " "); ok {
		if date != "" && date != d {
			return "", "", fmt.Errorf("two dates: %s and --date %s", d, date)
		}
		arg, date = strings.TrimSpace(t), d
	}
	if _, err := time.Parse(time.TimeOnly, arg); err != nil {
		return "", "", fmt.Errorf("round code %q: want HH:MM:SS", arg)
	}
	if date != "" {
		if _, err := time.Parse(time.DateOnly, date); err != nil {
			return "", "", fmt.Errorf("date %q: want YYYY-MM-DD", date)
		}
	}
	return "#" + arg, date, nil
}

func printRound(w io.Writer, r console.RoundDetail) {
	fmt.Fprintf(w, "round %s (%s), started %s GMT\n", r.Code, r.Game, r.Start.UTC().Format("2006-01-02 15:04:05.000"))
	type line struct {
		t    time.Time
		text string
	}
	var lines []line
	for _, c := range r.CardLog {
		who := "dealer"
		if c.Seat != 0 {
			who = fmt.Sprintf("seat %d hand %d", c.Seat, max(c.Hand, 1))
		}
		text := fmt.Sprintf("card %s to %s = %d", c.Card, who, c.Total)
		if c.Hole {
			text = "hole card " + c.Card.String() + " to dealer"
		}
		lines = append(lines, line{c.Time, text})
	}
	for _, d := range r.Decisions {
		text := fmt.Sprintf("seat %d hand %d: %s", d.Seat, max(d.Hand, 1), d.Action)
		if d.Auto {
			text += " (timeout)"
		}
		lines = append(lines, line{d.Time, text})
	}
	for _, n := range r.Notes {
		lines = append(lines, line{n.Time, n.Text})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].t.Before(lines[j].t) })
	for _, l := range lines {
		fmt.Fprintf(w, "  %s  %s\n", l.t.UTC().Format(time.TimeOnly+".000"), l.text)
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

// verifyBrokerSeq reads the seq the table's retained state at rf's broker
// names, for the table the data directory records (else --studio and
// --table), and says it; 0 when the broker holds none.
func verifyBrokerSeq(rf *remoteFlags, fs *flag.FlagSet, jf journalFlags, stdout io.Writer) (uint64, error) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if jf.id.Studio != "" && !given["studio"] {
		rf.studio = jf.id.Studio
	}
	if jf.id.Table != "" && !given["table"] {
		rf.table = jf.id.Table
	}
	var urls []string
	for _, u := range strings.Split(rf.broker, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return 0, errors.New("--broker: no URL")
	}
	o := mqttlink.DefaultOptions()
	o.Studio, o.Table = rf.studio, rf.table
	o.BrokerURL, o.FailoverURLs = urls[0], urls[1:]
	o.ClientID = fmt.Sprintf("tablectl-verify-%d", time.Now().UnixNano())
	o.Username, o.Password = rf.user, rf.pass
	o.TLS = mqttlink.TLSOptions{Enabled: rf.caFile != "" || rf.certFile != "", CAFile: rf.caFile, CertFile: rf.certFile, KeyFile: rf.keyFile}
	o.OutboxDir = filepath.Join(jf.dataDir, "outbox") // only validated: nothing is opened
	o.ConnectTimeout = rf.timeout
	ctx, cancel := context.WithTimeout(context.Background(), rf.timeout)
	defer cancel()
	seq, found, err := mqttlink.BrokerPublishedSeq(ctx, o, time.Second)
	if err != nil {
		return 0, fmt.Errorf("%s, table %s/%s: %w", rf.broker, rf.studio, rf.table, err)
	}
	if !found {
		fmt.Fprintf(stdout, "no retained state of table %s/%s at %s (a new table, a broker without persistence that restarted, or an ACL that hides it): the journal is checked against the outbox only\n",
			rf.studio, rf.table, rf.broker)
		return 0, nil
	}
	fmt.Fprintf(stdout, "the table's retained state at %s names seq %d\n", rf.broker, seq)
	return seq, nil
}
