package shoe_test

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table/card"
)

// A stacked shoe on a pseudo-terminal, read by the real reader through
// go.bug.st/serial.
func Example() {
	dev, err := shoe.New(shoe.Options{Seed: 1, Script: []card.Card{card.MustParse("Ah"), card.MustParse("Td")}}, zerolog.Nop())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = dev.Run(ctx) }()

	events := make(chan shoereader.Event, 16)
	r := shoereader.New(serialport.Opener(dev.Path(), serialport.DefaultBaud), shoereader.DefaultOptions(), zerolog.Nop())
	readerDone := make(chan struct{})
	go func() { defer close(readerDone); _ = r.Run(ctx, events) }()

	_ = dev.PullN(ctx, 2)
	for ev := range events {
		switch ev.Kind {
		case shoereader.ShoeID:
			fmt.Println("shoe", ev.ShoeID)
		case shoereader.Card:
			fmt.Println(ev.Card)
		}
		if ev.Card == card.MustParse("Td") {
			break
		}
	}
	cancel()
	<-done
	<-readerDone
	// Output:
	// shoe SIM0001-0001
	// Ah
	// Td
}
