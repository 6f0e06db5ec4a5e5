package mqttlink

import (
	"bytes"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

type ring map[string]ed25519.PublicKey

func (r ring) SupervisorKey(name string) (ed25519.PublicKey, bool) {
	k, ok := r[name]
	return k, ok
}

func TestReplayGuard(t *testing.T) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	root := "livetable/s1/t1/"
	keys := ring{"anna": key.Public().(ed25519.PublicKey)}
	cmd := func(k ed25519.PrivateKey, root, id, by, reason string, at time.Time) Command {
		b, err := SignSupervisor(k, root, SupervisorCommand{ID: id, Type: CmdVoid, By: by, Reason: reason, Time: at})
		require.NoError(t, err)
		c, err := DecodeCommand(b)
		require.NoError(t, err)
		return c
	}
	g := newReplayGuard(time.Minute, now.Add(-time.Hour))
	first := cmd(key, root, "v1", "anna", "misdeal", now)
	tests := []struct {
		name   string
		c      Command
		at     time.Time
		reason string // "" accepted
	}{
		{"signed by anna", first, now, ""},
		{"the same again", first, now.Add(time.Second), "replayed"},
		{"the same after the window", first, now.Add(61 * time.Second), "outside the table's window"},
		{"clock 59 s behind", cmd(key, root, "v2", "anna", "misdeal", now.Add(-59*time.Second)), now, ""},
		{"clock 59 s ahead", cmd(key, root, "v3", "anna", "misdeal", now.Add(59*time.Second)), now, ""},
		{"too old", cmd(key, root, "v4", "anna", "misdeal", now.Add(-2*time.Minute)), now, "outside the table's window"},
		{"another table's", cmd(key, "livetable/s1/t2/", "v5", "anna", "misdeal", now), now, "does not verify"},
		{"another key", cmd(other, root, "v6", "anna", "misdeal", now), now, "does not verify"},
		{"not an account", cmd(other, root, "v7", "eve", "misdeal", now), now, "not a supervisor"},
		{"unsigned", Command{ID: "v8", Type: CmdVoid, By: "anna", Reason: "x", Supervisor: true}, now, "not signed"},
		{"player commands need none", Command{ID: "d1", Type: CmdDecision}, now, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := g.authorise(tc.c, root, keys, tc.at)
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnauthorised)
			assert.Contains(t, err.Error(), tc.reason)
		})
	}
	// An altered field no longer verifies.
	c := cmd(key, root, "v9", "anna", "misdeal", now)
	c.Reason = "camera"
	require.ErrorContains(t, g.authorise(c, root, keys, now), "does not verify")
	assert.ErrorIs(t, g.authorise(first, root, nil, now), ErrUnauthorised, "no accounts: refused")
	// Signatures are forgotten once their time has left the window.
	assert.Len(t, g.seen, 3)
	require.NoError(t, g.authorise(cmd(key, root, "v10", "anna", "x", now.Add(3*time.Minute)), root, keys, now.Add(3*time.Minute)))
	assert.Len(t, g.seen, 1)
}

// TestSignedAt: a correct's position (at) is signed: altered, added to a
// command signed without it, or taken off one signed with it, the
// signature no longer verifies; a correct without it is signed as before
// (v1), so older tools' signatures still verify.
func TestSignedAt(t *testing.T) {
	_, now, root, keys, decode := signedFixture(t)
	base := SupervisorCommand{ID: "c1", Type: CmdCorrect, By: "anna", Reason: "misread", Card: "Qh", Time: now}
	withAt := base
	withAt.ID, withAt.At = "c2", 12
	tests := []struct {
		name   string
		c      func() Command
		reason string // "" accepted
	}{
		{"without at (v1)", func() Command { return decode(base) }, ""},
		{"with at (v2)", func() Command { return decode(withAt) }, ""},
		{"at altered", func() Command { c := decode(withAt); c.At = 13; return c }, "does not verify"},
		{"at taken off", func() Command { c := decode(withAt); c.At = 0; return c }, "does not verify"},
		{"at added", func() Command { c := decode(base); c.At = 12; return c }, "does not verify"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newReplayGuard(time.Minute, now.Add(-time.Hour))
			c := tc.c()
			err := g.authorise(c, root, keys, now)
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnauthorised)
			assert.Contains(t, err.Error(), tc.reason)
		})
	}
	assert.Equal(t, "livetable supervisor command v1\nr/\nc1\ncorrect\nanna\nmisread\nQh\n0\n",
		string(signedMessage("r/", base, 0)), "the v1 message older tools sign")
	assert.Equal(t, "livetable supervisor command v2\nr/\nc2\ncorrect\nanna\nmisread\nQh\n12\n0\n",
		string(signedMessage("r/", withAt, 0)))
}

func TestSignRefusesLineBreaks(t *testing.T) {
	_, err := SignSupervisor(ed25519.NewKeyFromSeed(make([]byte, 32)), "r/", SupervisorCommand{ID: "a", Type: CmdPause, By: "anna", Reason: "two\nlines"})
	require.ErrorIs(t, err, ErrMalformedCommand)
}

// TestReplayGuardStart: the guard vouches for the signatures of its own
// run only: a command signed before its start is refused as such (not as
// a replay, and not remembered: signed again it goes), one signed at the
// start or after it is judged as ever, and the window still bounds both.
func TestReplayGuardStart(t *testing.T) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	root := "livetable/s1/t1/"
	keys := ring{"anna": key.Public().(ed25519.PublicKey)}
	cmd := func(id string, at time.Time) Command {
		b, err := SignSupervisor(key, root, SupervisorCommand{ID: id, Type: CmdPause, By: "anna", Time: at})
		require.NoError(t, err)
		c, err := DecodeCommand(b)
		require.NoError(t, err)
		return c
	}
	tests := []struct {
		name string
		c    Command
		now  time.Time
		want error
		code string
	}{
		{"signed a millisecond before the start", cmd("p1", start.Add(-time.Millisecond)), start.Add(5 * time.Second), ErrSignedBeforeStart, "sign_again"},
		{"signed 30 s before, in the window", cmd("p2", start.Add(-30*time.Second)), start.Add(time.Second), ErrSignedBeforeStart, "sign_again"},
		{"signed at the start", cmd("p3", start), start, nil, ""},
		{"clicked 5 s after the start", cmd("p4", start.Add(5*time.Second)), start.Add(5 * time.Second), nil, ""},
		{"signed before, outside the window", cmd("p5", start.Add(-2*time.Minute)), start, ErrUnauthorised, "unauthorised"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newReplayGuard(time.Minute, start)
			err := g.authorise(tc.c, root, keys, tc.now)
			if tc.want == nil {
				require.NoError(t, err)
				assert.Len(t, g.seen, 1)
				return
			}
			require.ErrorIs(t, err, tc.want)
			// A good signature made before the start is not unauthorised:
			// that code tells the supervisor the key is bad, and pages.
			assert.Equal(t, tc.code, ReplyCode(err))
			assert.Empty(t, g.seen, "nothing remembered")
		})
	}
	// Signed before the start and refused, then signed again under its id.
	g := newReplayGuard(time.Minute, start)
	require.ErrorIs(t, g.authorise(cmd("p6", start.Add(-time.Second)), root, keys, start), ErrSignedBeforeStart)
	require.NoError(t, g.authorise(cmd("p6", start.Add(time.Second)), root, keys, start.Add(time.Second)))
}

// TestSignedRound: the round a void or a correct names is signed (v3):
// altered, taken off (a void signed for round X, delayed, stripped of X
// to void the round in play) or added, the signature no longer verifies;
// the decoded command carries it to the table. Without it the command is
// signed as before (v1, v2).
func TestSignedRound(t *testing.T) {
	key, now, root, keys, decode := signedFixture(t)
	void := SupervisorCommand{ID: "v1", Type: CmdVoid, By: "anna", Reason: "misdeal", Time: now}
	voidX := void
	voidX.ID, voidX.Round = "v2", "#08:59:40"
	correctX := SupervisorCommand{ID: "c1", Type: CmdCorrect, By: "anna", Reason: "misread", Card: "Qh", At: 12, Round: "#08:59:40", Time: now}
	tests := []struct {
		name   string
		c      func() Command
		reason string // "" accepted
	}{
		{"void without round (v1)", func() Command { return decode(void) }, ""},
		{"void with round (v3)", func() Command { return decode(voidX) }, ""},
		{"correct with at and round (v3)", func() Command { return decode(correctX) }, ""},
		{"round altered", func() Command { c := decode(voidX); c.Round = "#09:00:00"; return c }, "does not verify"},
		{"round taken off", func() Command { c := decode(voidX); c.Round = ""; return c }, "does not verify"},
		{"round added", func() Command { c := decode(void); c.Round = "#08:59:40"; return c }, "does not verify"},
		{"at taken off a v3 correct", func() Command { c := decode(correctX); c.At = 0; return c }, "does not verify"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newReplayGuard(time.Minute, now.Add(-time.Hour))
			err := g.authorise(tc.c(), root, keys, now)
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnauthorised)
			assert.Contains(t, err.Error(), tc.reason)
		})
	}
	c := decode(voidX)
	assert.Equal(t, "#08:59:40", c.Round)
	assert.Equal(t, "#08:59:40", c.Input.(table.Supervisor).Round, "the table judges the round signed")
	assert.Equal(t, "livetable supervisor command v3\nr/\nv2\nvoid\nanna\nmisdeal\n\n\n#08:59:40\n0\n",
		string(signedMessage("r/", voidX, 0)))
	assert.Equal(t, "livetable supervisor command v3\nr/\nc1\ncorrect\nanna\nmisread\nQh\n12\n#08:59:40\n0\n",
		string(signedMessage("r/", correctX, 0)))
	_, err := SignSupervisor(key, root, SupervisorCommand{ID: "v3", Type: CmdVoid, By: "anna", Reason: "x", Round: "a\nb", Time: now})
	require.ErrorIs(t, err, ErrMalformedCommand)
}

// signedFixture is anna's key and ring, a signing time and a table's
// root, and decode, which signs a supervisor command with the key and
// decodes it as the link does.
func signedFixture(t *testing.T) (key ed25519.PrivateKey, now time.Time, root string, keys ring, decode func(SupervisorCommand) Command) {
	key = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	now = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	root = "livetable/s1/t1/"
	keys = ring{"anna": key.Public().(ed25519.PublicKey)}
	decode = func(sc SupervisorCommand) Command {
		t.Helper()
		b, err := SignSupervisor(key, root, sc)
		require.NoError(t, err)
		c, err := DecodeCommand(b)
		require.NoError(t, err)
		return c
	}
	return key, now, root, keys, decode
}
