package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// The wiring cmd/tabled does: a controller, a console on it, both run
// until the daemon stops. The console's built-in History serves recall
// here; a daemon passes its journal-backed Recall instead.
func ExampleNew() {
	rs, err := rules.Game("000")
	if err != nil {
		panic(err)
	}
	log := zerolog.New(os.Stderr)
	ctl, err := table.New(table.DefaultOptions(rs), log)
	if err != nil {
		panic(err)
	}
	hash, err := console.HashPassword("from the config, never in code")
	if err != nil {
		panic(err)
	}
	opts := console.DefaultOptions()
	opts.Addr = "127.0.0.1:0"
	opts.GameName = rs.Name
	opts.Supervisors = map[string]string{"giulia": hash}
	health := func() console.Health {
		return console.Health{Checks: []console.Check{{Name: console.CheckShoe, OK: true}}}
	}
	srv, err := console.New(opts, ctl, nil, health, log)
	if err != nil {
		panic(err)
	}
	srv.Metrics().ObserveFsync(400 * time.Microsecond) // fed by the journal's hook

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	go func() { _ = ctl.Run(ctx, nil) }()
	go func() { _ = srv.Run(ctx) }()
	<-srv.Ready()
	fmt.Println("dealer view on http://" + srv.Addr() + "/")
}

// Health is served on /healthz with the overall verdict.
func ExampleHealth() {
	h := console.Health{Checks: []console.Check{
		{Name: console.CheckShoe, OK: true, Detail: "SIM-1"},
		{Name: console.CheckBroker, OK: false, Detail: "connection refused"},
	}}
	b, err := json.Marshal(h)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.OK())
	fmt.Println(string(b))
	// Output:
	// false
	// {"ok":false,"checks":[{"name":"shoe","ok":true,"detail":"SIM-1"},{"name":"broker","ok":false,"detail":"connection refused"}]}
}
