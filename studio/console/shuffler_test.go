package console

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shufflerHook is Options.ShufflerReset over a shuffler the test puts in
// or out of fault.
type shufflerHook struct {
	mu    sync.Mutex
	fault bool
	calls []string // by/reason of each reset that went through
}

func (h *shufflerHook) reset(_ context.Context, by, reason string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.fault {
		return fmt.Errorf("%w: dealing (AInPlay_BShuffling)", ErrShufflerNotInFault)
	}
	h.fault = false
	h.calls = append(h.calls, by+"/"+reason)
	return nil
}

func (h *shufflerHook) done() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// TestShufflerResetCommand: the supervisor's shuffler_reset reaches
// Options.ShufflerReset with the session's account and the reason, never
// the table; a second one (nothing in fault any more) is refused
// shuffler_not_in_fault; a viewer, a request without the CSRF token, one
// with a card, and a table without a shuffler are refused, none reaching
// the hook.
func TestShufflerResetCommand(t *testing.T) {
	hook := &shufflerHook{fault: true}
	f := newFixture(t, func(o *Options) {
		o.ShufflerReset = hook.reset
		o.Accounts = testAccounts{testUser: {testHash(t, testPassword), true}, "vito": {testHash(t, testPassword), false}}
	})
	c, token := f.supervisorPage(t, testUser)

	code, e := f.command(t, c, "", f.web.URL, CommandRequest{Command: cmdShufflerReset})
	assert.Equal(t, http.StatusForbidden, code, "no CSRF token")
	assert.Equal(t, "csrf", e.Kind)
	code, e = f.command(t, c, token, "", CommandRequest{Command: cmdShufflerReset, Card: "Qh"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "bad_request", e.Kind)
	vc, vtoken := f.supervisorPage(t, "vito")
	code, e = f.command(t, vc, vtoken, "", CommandRequest{Command: cmdShufflerReset})
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, "viewer", e.Kind)
	assert.Empty(t, hook.done(), "no refused request reached the shuffler")

	code, e = f.command(t, c, token, "", CommandRequest{Command: cmdShufflerReset, Reason: " shoe B reseated "})
	require.Equal(t, http.StatusOK, code, "%+v", e)
	assert.Equal(t, []string{testUser + "/shoe B reseated"}, hook.done())
	code, e = f.command(t, c, token, "", CommandRequest{Command: cmdShufflerReset})
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "shuffler_not_in_fault", e.Kind)
	assert.Contains(t, e.Error, "not in fault")
	assert.Len(t, hook.done(), 1)
	assert.Empty(t, f.fake.Inputs(), "a shuffler reset is no table input")

	// A table without a shuffler.
	f = newFixture(t, nil)
	c, token = f.supervisor(t)
	code, e = f.command(t, c, token, "", CommandRequest{Command: cmdShufflerReset})
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "no_shuffler", e.Kind)
}
