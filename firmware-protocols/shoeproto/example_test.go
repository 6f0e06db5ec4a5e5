package shoeproto_test

import (
	"fmt"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/table/card"
)

// A frame split across two reads, with line noise in front, decodes once.
func ExampleDecoder() {
	wire, _ := shoeproto.AppendMessage([]byte("noise"), 42, &shoeproto.Message{
		Type: shoeproto.TypeCard, Card: card.MustParse("Kh"), Confidence: 98,
	})
	var d shoeproto.Decoder
	fn := func(f shoeproto.Frame, err error) {
		if err != nil {
			fmt.Println("skipped:", err)
			return
		}
		var m shoeproto.Message
		if err := m.Unmarshal(f); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(f.Seq, f.Type, m.Card, m.Confidence)
	}
	d.Feed(wire[:9], fn)
	d.Feed(wire[9:], fn)
	// Output:
	// skipped: shoeproto: garbage between frames: 5 bytes at offset 0
	// 42 CARD Kh 98
}
