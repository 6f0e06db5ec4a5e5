package main

import (
	"fmt"
	"net"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/round"
)

// printEvents logs one readable line per event: the dealer's and the
// engineer's view of the table in the terminal.
func printEvents(events <-chan table.Event, log zerolog.Logger) {
	for ev := range events {
		var msg string
		switch b := ev.Body.(type) {
		case *table.State:
			continue // the retained snapshot is for MQTT and the console
		case round.Event:
			if b.Type == round.EvDecisionRequested && b.Players > 16 {
				continue
			}
			msg = b.String()
		case table.PhaseChanged:
			if b.Phase == table.PhasePaused {
				continue // the Paused event's line says who and why
			}
			msg = "phase " + string(b.Phase)
			if b.Reason != "" {
				msg += ": " + b.Reason
			}
		case table.Alarm:
			log.Warn().Uint64("seq", ev.Seq).Str("round", ev.Round).Str("code", b.Code).Msg("ALARM " + b.Message)
			continue
		case table.Paused:
			msg = fmt.Sprintf("PAUSED by %s: %s", b.By, b.Reason)
		case table.Resumed:
			msg = "resumed by " + b.By
		case table.ShoeInPlay:
			msg = "new shoe in play: " + b.ShoeID
		case table.CutCard:
			msg = "cut card out (" + b.Source + "): this round finishes, then the shoe changes"
		case table.Burned:
			msg = "burned " + b.Card.String()
		default:
			msg = ev.Kind()
		}
		log.Info().Uint64("seq", ev.Seq).Str("round", ev.Round).Msg(msg)
	}
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

func port(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "1883"
	}
	return p
}
