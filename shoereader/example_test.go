package shoereader_test

import (
	"context"
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/shoetest"
)

// A reader on an in-memory port: the device says HELLO, deals a card,
// sends it again (a lost ACK) and deals the cut card. The duplicate is
// dropped.
func Example() {
	port, device := shoetest.Pipe()
	go func() { _, _ = io.Copy(io.Discard, device) }() // the host's ACKs
	ports := make(chan shoereader.Port, 1)
	ports <- port

	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan shoereader.Event, 8)
	r := shoereader.New(shoetest.Opener(ports), shoereader.DefaultOptions(), zerolog.Nop())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, events) }()

	for _, f := range [][]byte{
		shoetest.Hello(1, "SN7", "1.0.0", 1),
		shoetest.Card(1, "Kh"),
		shoetest.Card(1, "Kh"),
		shoetest.Simple(2, shoeproto.TypeCutCard),
	} {
		_, _ = device.Write(f)
	}
	for range 3 {
		ev := <-events
		fmt.Println(ev.Kind, ev.Seq, ev.Card)
	}
	cancel()
	<-done
	_ = device.Close()
	// Output:
	// connected 0 ??
	// card 1 Kh
	// cut_card 2 ??
}
