// Command tablesim runs the deterministic simulation of a table
// (simulators/world; docs/simulation.md): many seeds on every core, or one
// seed with its trace. It ends with one line: "N schedules, V violations".
//
//	tablesim -seeds 10000     # seeds 1..10000; a violation prints its seed and the replay command
//	tablesim -seed 42         # one seed, with a readable trace
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/livetable/livetable/simulators/world"
	"github.com/livetable/livetable/table/rules"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tablesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 10000, "how many seeds to run (1..N)")
	seed := fs.Uint64("seed", 0, "run this one seed with its trace")
	steps := fs.Int("steps", 400, "inputs offered per run")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "runs at once")
	powerOnly := fs.Bool("power-cuts-only", false, "only power cuts, no EIO or full disk")
	noJumps := fs.Bool("no-clock-jumps", false, "the wall clock never steps")
	jumpEvery := fs.Int("clock-jumps", 0, "the wall clock steps in 1 of n steps in every seed (at least 2; 0: half the seeds, in 1 of 20-80)")
	noSerial := fs.Bool("no-serial", false, "the shoe's frames go straight to the controller (no serial line, no reader)")
	noNet := fs.Bool("no-network", false, "no MQTT link, broker nor backend: the backend's view is what the controller hands out")
	game := fs.String("game", "all", "the game (000..004), or all: the seed picks it (seed mod 5)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := checkFlags(*seeds, *steps, *workers, *game); err == nil && (*jumpEvery < 0 || *jumpEvery == 1) {
		fmt.Fprintf(stderr, "tablesim: -clock-jumps %d: 0, or at least 2\n", *jumpEvery)
		return 2
	} else if err != nil {
		fmt.Fprintln(stderr, "tablesim:", err)
		return 2
	}
	if *seed != 0 {
		res := world.Run(world.Options{Seed: *seed, Steps: *steps, Trace: stdout, PowerCutsOnly: *powerOnly, Game: *game, NoClockJumps: *noJumps, JumpEvery: *jumpEvery, NoSerial: *noSerial, NoNetwork: *noNet})
		var st strayCount
		st.add(res)
		fmt.Fprintln(stdout, st)
		fmt.Fprintln(stdout, st.clock)
		fmt.Fprintf(stdout, "1 schedules, %d violations\n", len(res.Violations))
		return exit(len(res.Violations))
	}
	// The replay command repeats the flags that shape a run.
	var flags []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "seeds" && f.Name != "workers" && f.Name != "seed" {
			flags = append(flags, "-"+f.Name+"="+f.Value.String())
		}
	})
	replay := ""
	if len(flags) > 0 {
		replay = fmt.Sprintf(" SIMFLAGS='%s'", strings.Join(flags, " "))
	}
	start, violations := time.Now(), 0
	var st strayCount
	world.RunMany(1, *seeds, *workers, world.Options{Steps: *steps, PowerCutsOnly: *powerOnly, Game: *game, NoClockJumps: *noJumps, JumpEvery: *jumpEvery, NoSerial: *noSerial, NoNetwork: *noNet}, func(res world.Result) {
		st.add(res)
		for _, v := range res.Violations {
			violations++
			fmt.Fprintf(stdout, "seed %d: %s\n  replay: make sim SEED=%d%s\n", res.Seed, v, res.Seed, replay)
		}
	})
	el := time.Since(start)
	fmt.Fprintf(stderr, "%d seeds in %v (%.0f schedules/s on %d workers)\n", *seeds, el.Round(time.Millisecond),
		float64(*seeds)/el.Seconds(), *workers)
	fmt.Fprintln(stdout, st)
	fmt.Fprintln(stdout, st.clock)
	fmt.Fprintf(stdout, "%d schedules, %d violations\n", *seeds, violations)
	return exit(violations)
}

// strayCount adds up the stray cards the runs pulled (rules epoch 3's
// set-aside list under faults: simulators/world/strays.go).
type strayCount struct {
	between, paused, waiting, aside, restarts, seeds int
	clock                                            clockCount
}

// clockCount adds up the wall clock's steps and the checks of the
// table's timers across them (simulators/world/timers.go).
type clockCount struct {
	steps, paused, shown, seeds int
}

func (c clockCount) String() string {
	return fmt.Sprintf("wall clock steps: %d (%d seeds); a player's timer paused after a step: %d; a running timer shown again after a step: %d",
		c.steps, c.seeds, c.paused, c.shown)
}

func (s *strayCount) add(res world.Result) {
	s.between += res.StraysBetween
	s.paused += res.StraysPaused
	s.waiting += res.StraysWaiting
	s.aside += res.SetAside
	s.restarts += res.StrayRestarts
	if res.StraysBetween+res.StraysPaused+res.StraysWaiting > 0 {
		s.seeds++
	}
	s.clock.steps += res.ClockSteps
	s.clock.paused += res.PausedAcrossSteps
	s.clock.shown += res.ShownAcrossSteps
	if res.ClockSteps > 0 {
		s.clock.seeds++
	}
}

func (s strayCount) String() string {
	return fmt.Sprintf("stray cards pulled: %d between rounds, %d while paused, %d while a player's answer waited (%d seeds); %d set aside, as in the fault-free run; %d restarts amid them",
		s.between, s.paused, s.waiting, s.seeds, s.aside, s.restarts)
}

// checkFlags refuses what would panic (a negative -seeds), never end (no
// workers, a negative -steps) or count a game that does not exist as a
// violation in every seed.
func checkFlags(seeds, steps, workers int, game string) error {
	switch {
	case seeds < 1:
		return fmt.Errorf("-seeds %d: at least 1", seeds)
	case steps < 1:
		return fmt.Errorf("-steps %d: at least 1", steps)
	case workers < 1:
		return fmt.Errorf("-workers %d: at least 1", workers)
	}
	if game != "all" {
		if _, err := rules.Game(game); err != nil {
			return fmt.Errorf("-game: %w", err)
		}
	}
	return nil
}

func exit(violations int) int {
	if violations > 0 {
		return 1
	}
	return 0
}
