// Command tablectl is the operator's and engineer's command line for a
// livetable table: scenario runs of the engine, and (as the daemon grows)
// status, pause, resume, void, history and journal checks.
//
//	tablectl scenario < case.json     # one round through the real engine; exit 2 on a scenario error
//	tablectl status                   # the running table's state (MQTT)
//	tablectl pause|resume|void|correct --by NAME --reason WHY --token T [--card Qh]
//	tablectl history [-n 20]          # recent rounds from the table's journal
//	tablectl round '#HH:MM:SS'        # one round in full: cards with times, decisions, wagers, payouts
//	tablectl journal verify           # every checksum and the hash chain
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/livetable/livetable/table/scenario"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: tablectl <command> [flags]

commands:
  scenario          read one scenario (JSON) on stdin, play it through the engine, print the result
  status            the running table's state, over MQTT
  pause, resume     supervisor: pause the table (--reason) or resume it
  void              supervisor: void the round in play, every initial wager returned (--reason)
  correct           supervisor: give the card the shoe misread (--card Qh)
  history           recent rounds from the journal, by game code, with results
  round CODE        one round in full from the journal
  journal verify    check every record's checksum and the hash chain

run 'tablectl <command> -h' for its flags
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "scenario":
		return runScenario(stdin, stdout)
	case "status":
		return runStatus(args[1:], stdout, stderr)
	case "pause", "resume", "void", "correct":
		return runSupervisor(args[0], args[1:], stdout, stderr)
	case "history":
		return runHistory(args[1:], stdout, stderr)
	case "round":
		return runRound(args[1:], stdout, stderr)
	case "journal":
		return runJournal(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "tablectl: unknown command %q\n%s", args[0], usage)
	return 2
}

// runScenario prints the result JSON, or {"error": "..."} with exit status 2.
func runScenario(stdin io.Reader, stdout io.Writer) int {
	enc := json.NewEncoder(stdout)
	in, err := scenario.Decode(stdin)
	if err == nil {
		var out *scenario.Output
		if out, err = scenario.Run(in); err == nil {
			if err := enc.Encode(out); err != nil {
				return 1
			}
			return 0
		}
	}
	_ = enc.Encode(map[string]string{"error": err.Error()})
	return 2
}
