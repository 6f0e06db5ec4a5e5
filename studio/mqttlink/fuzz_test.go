package mqttlink_test

import (
	"errors"
	"testing"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
)

// FuzzDecodeCommand checks that no payload panics the decoder, that every
// rejection is a *CommandError with a reason, and that every accepted
// command carries an id and an input that survives the journal's encoding.
// The committed corpus under testdata/fuzz holds every case of
// commandCases; the same cases are added here so `go test` runs them even
// without the files.
func FuzzDecodeCommand(f *testing.F) {
	for _, tc := range commandCases {
		f.Add([]byte(tc.payload))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cmd, err := mqttlink.DecodeCommand(b)
		if err != nil {
			var ce *mqttlink.CommandError
			if !errors.As(err, &ce) || ce.Reason == "" || !errors.Is(err, mqttlink.ErrMalformedCommand) {
				t.Fatalf("rejection %v is not a *CommandError with a reason", err)
			}
			return
		}
		if cmd.ID == "" || cmd.Type == "" {
			t.Fatalf("accepted command lacks id or type: %+v", cmd)
		}
		if cmd.Type == mqttlink.CmdResend {
			// The link answers it; the controller never sees an input.
			if cmd.Input != nil || cmd.From == 0 || (cmd.To != 0 && (cmd.To < cmd.From || cmd.To-cmd.From >= mqttlink.MaxResend)) {
				t.Fatalf("accepted resend with a bad range: %+v", cmd)
			}
			return
		}
		if cmd.Type == mqttlink.CmdShufflerReset {
			// The link answers it too (Options.ShufflerReset), for a
			// supervisor it names; the signature is the guard's to check.
			if cmd.Input != nil || !cmd.Supervisor || cmd.By == "" || cmd.Card != "" || cmd.At != 0 {
				t.Fatalf("accepted shuffler_reset is not a supervisor's: %+v", cmd)
			}
			return
		}
		if cmd.Input == nil {
			t.Fatalf("accepted command lacks its input: %+v", cmd)
		}
		enc, err := table.EncodeInput(cmd.Input)
		if err != nil {
			t.Fatalf("accepted input does not encode: %v", err)
		}
		back, err := table.DecodeInput(enc)
		if err != nil {
			t.Fatalf("accepted input does not decode back: %v", err)
		}
		enc2, err := table.EncodeInput(back)
		if err != nil || string(enc2) != string(enc) {
			t.Fatalf("input changed through the journal encoding: %s then %s (%v)", enc, enc2, err)
		}
	})
}
