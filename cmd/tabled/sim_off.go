//go:build production

package main

import (
	"context"
	"errors"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// A production build (-tags production: make build) links no simulator,
// not periph's gpiotest and not the embedded broker: the demo, --sim and
// a configuration without broker.url say so and stop. sim.go
// is the wiring of a build with simulators (go run, make run, the tests).

// errNoSimulators is the answer of a production build to --demo and --sim.
var errNoSimulators = errors.New("tabled: this build has no simulators (built with -tags production): --demo and gpio.sim need `go run ./cmd/tabled` or `make run`")

// errNoEmbeddedBroker is the answer of a production build to a
// configuration without broker.url.
var errNoEmbeddedBroker = errors.New("tabled: this build has no embedded broker (built with -tags production): set broker.url (--broker) to the studio's mosquitto or cluster (docs/deploy.md)")

// buildRefuses is what this build says, at start, of a configuration that
// needs a simulator or the embedded broker (--check-config asks it too).
func buildRefuses(cfg Config) error {
	switch {
	case cfg.Demo.Enabled || cfg.GPIO.Sim:
		return errNoSimulators
	case cfg.Broker.URL == "":
		return errNoEmbeddedBroker
	}
	return nil
}

func (d *tabled) startEmbeddedBroker(context.Context, *errgroup.Group) error {
	if d.cfg.Demo.Enabled {
		return errNoSimulators
	}
	return errNoEmbeddedBroker
}

func simGPIO(Config, *rules.Set, clockwork.Clock, zerolog.Logger) (*hardware, error) {
	return nil, errNoSimulators
}

type demo struct{}

func startDemo(context.Context, *errgroup.Group, Config, *rules.Set, table.Options, uint64, zerolog.Logger) (*demo, string, error) {
	return nil, "", errNoSimulators
}

func (*demo) close() {}

func (*demo) onSwap(context.Context, zerolog.Logger) func(string) { return nil }

func (*demo) play(context.Context, *errgroup.Group, *table.Controller, Config, *rules.Set, bool, string, zerolog.Logger) error {
	return errNoSimulators
}
