package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/console/consoletest"
	"github.com/livetable/livetable/table"
)

// FuzzCommand posts arbitrary bodies to /api/command as a logged-in
// supervisor: every one gets a JSON answer (200 with the command, or an
// error with its kind; never a panic or a 500), and the table is handed
// only a supervisor command it can journal: one of the four, with a
// reason where one is needed and a card for a correct, that encodes and
// decodes back the same.
func FuzzCommand(f *testing.F) {
	for _, s := range []string{
		`{"command":"pause","reason":"camera 2"}`,
		`{"command":"correct","card":"Qh"}`,
		`{"command":"correct","card":"Qh","at":7}`,
		`{"command":"correct","card":"Qh","at":-7}`,
		`{"command":"void","reason":"r","at":7}`,
		`{"command":"correct","card":"Qh","at":1e99}`,
		`{"command":"void","reason":"  "}`,
		`{"command":"void","reason":"misdeal","round":"#20:15:33"}`,
		`{"command":"void","reason":"misdeal","round":"  "}`,
		`{"command":"correct","card":"Qh","at":7,"round":"#20:15:33"}`,
		`{"command":"resume","round":"#20:15:33"}`,
		`{"command":"shuffler_reset","round":"#20:15:33"}`,
		`{"command":"resume","extra":1}`,
		`{"command":"shuffler_reset","reason":"shoe B reseated"}`,
		`{"command":"shuffler_reset","card":"Qh"}`,
		`{"command":"correct","card":"\u0000"}`,
		`{"command":"pause","reason":"a"}{"command":"void"}`,
		`[]`,
		`not json`,
		``,
	} {
		f.Add([]byte(s))
	}
	fx := newFixture(f, nil)
	c, token := fx.supervisor(f)
	f.Fuzz(func(t *testing.T, reqBody []byte) {
		before := len(fx.fake.Inputs())
		hr, err := http.NewRequest(http.MethodPost, fx.web.URL+"/api/command", bytes.NewReader(reqBody))
		require.NoError(t, err)
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set(csrfHeader, token)
		hr.Header.Set("Origin", fx.web.URL)
		resp, err := c.Do(hr)
		require.NoError(t, err)
		got := body(t, resp)
		var answer map[string]any
		require.NoError(t, json.Unmarshal([]byte(got), &answer), "a JSON answer: %q", got)
		inputs := fx.fake.Inputs()
		if resp.StatusCode != http.StatusOK {
			require.Contains(t, []int{http.StatusBadRequest, http.StatusConflict}, resp.StatusCode, got)
			require.NotEmpty(t, answer["kind"], got)
			require.Len(t, inputs, before, "a refused request reaches the table never")
			return
		}
		require.Len(t, inputs, before+1)
		require.NoError(t, consoletest.CheckSupervisor(inputs[before]))
		require.Equal(t, testUser, inputs[before].(table.Supervisor).By)
	})
}
