package consoletest

import (
	"bytes"
	"fmt"

	"github.com/livetable/livetable/table"
)

// CheckSupervisor reports why in is not a supervisor command the console
// or the local socket may hand the table: one of pause, void (each with a
// reason), correct (with a valid card) and resume, a round named by a
// void or a correct only, whose journal bytes
// decode and encode back the same (JSON keeps valid UTF-8 only: what the
// journal holds is what it can). It returns nil when in is one.
func CheckSupervisor(in table.Input) error {
	s, ok := in.(table.Supervisor)
	if !ok {
		return fmt.Errorf("%T is not a supervisor command", in)
	}
	if s.At != 0 && s.Command != "correct" {
		return fmt.Errorf("%s naming card %d of the shoe", s.Command, s.At)
	}
	if s.Round != "" && s.Command != "void" && s.Command != "correct" {
		// The round fences a void or a correct only: on another command
		// it would read as a fence it is not.
		return fmt.Errorf("%s naming round %q", s.Command, s.Round)
	}
	switch s.Command {
	case "pause", "void":
		if s.Reason == "" {
			return fmt.Errorf("%s without a reason", s.Command)
		}
	case "correct":
		if !s.Card.Valid() {
			return fmt.Errorf("correct with an invalid card %v", s.Card)
		}
		if s.At < 0 {
			return fmt.Errorf("correct naming card %d of the shoe", s.At)
		}
	case "resume":
	default:
		return fmt.Errorf("command %q", s.Command)
	}
	b, err := table.EncodeInput(s)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	back, err := table.DecodeInput(b)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	again, err := table.EncodeInput(back)
	if err != nil {
		return fmt.Errorf("encode again: %w", err)
	}
	if !bytes.Equal(b, again) {
		return fmt.Errorf("the journal's bytes change on the way back: %s -> %s", b, again)
	}
	return nil
}
