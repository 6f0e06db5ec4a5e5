package localctl_test

import (
	"bufio"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/console/consoletest"
	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/table"
)

// FuzzSocket sends arbitrary bytes to the table's local socket as one
// request: the daemon answers every one with one JSON reply line (never
// a panic, a hang or a closed connection without a word), and hands the
// table only a supervisor command it can journal: one of the four, with a
// reason where one is needed and a card for a correct, that encodes and
// decodes back the same.
func FuzzSocket(f *testing.F) {
	for _, s := range []string{
		`{"command":"pause","reason":"camera 2","id":"p1"}`,
		`{"command":"correct","card":"Qh"}`,
		`{"command":"correct","card":"Qh","at":12}`,
		`{"command":"correct","card":"Qh","at":-1}`,
		`{"command":"pause","reason":"r","at":3}`,
		`{"command":"void","reason":"  "}`,
		`{"command":"void","reason":"misdeal","round":"#22:10:05"}`,
		`{"command":"correct","card":"Qh","at":12,"round":"#22:10:05-2"}`,
		`{"command":"resume","round":"#22:10:05"}`,
		`{"command":"void","reason":"misdeal","round":"#22:10\n:05"}`,
		`{"command":"status"}`,
		`{"command":"resume","id":"\u0000\ud800"}`,
		`{"command":"correct","card":"10h"}`,
		`{"command":["pause"]}`,
		`not json`,
		``,
	} {
		f.Add([]byte(s))
	}
	fake := consoletest.New(table.State{Phase: "dealing", Paused: true})
	path := start(f, fake)
	f.Fuzz(func(t *testing.T, line []byte) {
		before := len(fake.Inputs())
		c, err := net.Dial("unix", path)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = c.Write(append(line, '\n'))
		require.NoError(t, err)
		got, err := bufio.NewReader(c).ReadBytes('\n')
		require.NoError(t, err, "a reply line")
		var rep localctl.Reply
		require.NoError(t, json.Unmarshal(got, &rep), "%s", got)
		inputs := fake.Inputs()
		if !rep.Accepted {
			require.NotEmpty(t, rep.Error)
			require.Len(t, inputs, before, "a refused request reaches the table never")
			return
		}
		if rep.ID == "" {
			return // status: no command for the table
		}
		require.Len(t, inputs, before+1)
		require.NoError(t, consoletest.CheckSupervisor(inputs[before]))
		require.NotEmpty(t, inputs[before].(table.Supervisor).ID)
	})
}
