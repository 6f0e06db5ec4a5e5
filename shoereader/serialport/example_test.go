package serialport_test

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
)

// The wiring in cmd/tabled: find the shoe's USB adapter by its serial
// number every time the reader (re)connects, so a replug under another
// /dev path is followed.
func ExampleByUSBSerial() {
	ctx := context.Background()
	r := shoereader.New(serialport.ByUSBSerial("A10K3QZ7", serialport.DefaultBaud), shoereader.DefaultOptions(), zerolog.Nop())
	events := make(chan shoereader.Event, 256)
	go func() { _ = r.Run(ctx, events) }()
	for ev := range events {
		_ = ev // hand the event to the table controller
	}
}
