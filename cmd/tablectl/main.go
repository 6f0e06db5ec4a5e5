// Command tablectl is the operator's and engineer's command line for a
// livetable table: scenario runs of the engine, and (as the daemon grows)
// status, pause, resume, void, correct, shuffler-reset, history and
// journal checks.
//
//	tablectl scenario [--check] < case.json  # one round through the real engine; exit 2 on a scenario error
//	tablectl supervisor add NAME      # an account: console login and the key that signs remote commands
//	tablectl status                   # the running table's state (local socket, or MQTT with --broker)
//	tablectl pause|resume --reason WHY
//	tablectl void --round CODE --reason WHY   # the round status printed: refused (exit 6) once it has settled
//	tablectl correct --card Qh [--at N] [--round CODE]
//	tablectl shuffler-reset           # the shuffler out of its fault, once fixed
//	tablectl history [-n 20]          # recent rounds from the table's journal
//	tablectl round '#2026-11-24 07:35:00'  # one round in full: cards with times, decisions, wagers, payouts
//	tablectl journal verify           # every checksum, the hash chain, and the journal against the outbox
//	tablectl journal accept-loss --by NAME --reason WHY  # accept events lost from the journal: tabled starts paused
//	tablectl journal salvage --by NAME --reason WHY      # a journal damaged mid-way opens again (damage moved aside)
//
// Every command takes --config (tabled's configuration file, for its
// defaults) and --data-dir, before or after the command's name.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/livetable/livetable/cmd/internal/buildinfo"
	"github.com/livetable/livetable/table/scenario"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: tablectl [--config FILE] [--data-dir DIR] <command> [flags]

commands:
  scenario          read one scenario (JSON) on stdin, play it through the engine, print the result
  supervisor        add, remove or list supervisor accounts (console login and command key)
  status            the running table's state
  pause, resume     supervisor: pause the table (--reason) or resume it
  void              supervisor: void the round you saw, every initial wager returned (--round CODE as status prints it, required; --reason); refused if it has settled
  shuffler-reset    supervisor: take the dual-shoe shuffler out of its fault once it is fixed (--reason: what was fixed), then resume
  correct           supervisor: give the card the shoe misread (--card Qh); several: one at a time, oldest first; it names the card (its position in the shoe, --at N or read off the state) and its round (--round CODE or read off the state) and is refused if that card is no longer the next or the round has moved on
  history           recent rounds from the journal, by game code, with results
  round CODE        one round in full from the journal ('#07:35:00', '#2026-11-24 07:35:00')
  journal verify    check every record's checksum, the hash chain, and that the journal is not behind the outbox
  journal accept-loss  accept the events a journal behind its outbox lost (--by, --reason): tabled then starts paused
  journal salvage      make a journal damaged mid-way (bad record, lost segment) open again, the damage moved aside (--by, --reason)
  version           the version, commit and build date

On the table box, status and the supervisor commands go to tabled's socket
in the data directory (its file permissions are the authorisation); with
--broker they go over MQTT, signed with the supervisor's key (--as), as
they do when the socket is not there and the config's broker is external.
Over MQTT give the supervisor's broker user (--user): the config's is the
table's own, which the ACL does not let send supervisor commands.

--config FILE is tabled's configuration: tablectl takes the data directory,
studio, table, game and broker from it. Without one, the data directory is
var/demo (where make run writes).

run 'tablectl <command> -h' for its flags
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	g, err := loadGlobals(args)
	if err != nil {
		fmt.Fprintln(stderr, "tablectl:", err)
		return 2
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	// Global flags before the command: --config F, --data-dir D.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		flagName := strings.TrimLeft(strings.SplitN(args[0], "=", 2)[0], "-")
		if flagName != "config" && flagName != "data-dir" {
			fmt.Fprintf(stderr, "tablectl: unknown flag %s before the command\n%s", args[0], usage)
			return 2
		}
		if strings.Contains(args[0], "=") {
			args = args[1:]
		} else {
			args = args[min(2, len(args)):]
		}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "scenario":
		return runScenario(args[1:], stdin, stdout, stderr)
	case "supervisor":
		return runSupervisorAdmin(g, args[1:], stdin, stdout, stderr)
	case "status":
		return runStatus(g, args[1:], stdout, stderr)
	case "pause", "resume", "void", "correct", "shuffler-reset":
		return runSupervisor(g, args[0], args[1:], stdout, stderr)
	case "history":
		return runHistory(g, args[1:], stdout, stderr)
	case "round":
		return runRound(g, args[1:], stdout, stderr)
	case "journal":
		return runJournal(g, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, buildinfo.String("tablectl"))
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "tablectl: unknown command %q\n%s", args[0], usage)
	return 2
}

const scenarioUsage = `usage: tablectl scenario [--check] < scenario.json

Plays one round from a known shoe order through the real engine and prints
the settled result as JSON (format: shared/docs/scenario-format.md).
stdin is a scenario, or a case file of testdata/scenarios ({"name", "why",
"input", "expected"}): then its input is played.

  --check   with a case file: compare the result with "expected" and list
            the differences on stderr; exit 1 on a difference

exit status: 0 played (and matched), 1 a difference (--check),
2 a scenario error (the result is {"error": "..."})
`

// runScenario prints the result JSON, or {"error": "..."} with exit status 2.
func runScenario(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below: help on stdout, a flag error's on stderr
	check := fs.Bool("check", false, "compare with the case file's expected result")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, scenarioUsage)
			return 0
		}
		fmt.Fprint(stderr, scenarioUsage)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tablectl scenario: unexpected argument %q (the scenario is read on stdin)\n%s", fs.Arg(0), scenarioUsage)
		return 2
	}
	enc := json.NewEncoder(stdout)
	in, c, err := scenario.DecodeCase(stdin)
	var out *scenario.Output
	if err == nil {
		out, err = scenario.Run(in)
	}
	if err == nil {
		if err := enc.Encode(out); err != nil {
			return 1
		}
	} else {
		_ = enc.Encode(map[string]string{"error": err.Error()})
	}
	if *check {
		if c == nil {
			fmt.Fprintln(stderr, "tablectl scenario --check: stdin is not a case file (no \"expected\")")
			return 2
		}
		if diffs := scenario.Check(c.Expected, out, err); len(diffs) > 0 {
			fmt.Fprintf(stderr, "%s: %d difference(s):\n  %s\n", c.Name, len(diffs), strings.Join(diffs, "\n  "))
			return 1
		}
		return 0
	}
	if err != nil {
		return 2
	}
	return 0
}
