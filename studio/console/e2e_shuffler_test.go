package console_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/livetable/livetable/shuffler"
	simshuffler "github.com/livetable/livetable/simulators/shuffler"
	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// TestBrowserShufflerReset: a real dual-shoe shuffler controller on the
// simulated shuffler's lines loses a swap's acknowledgement, latches its
// fault and pauses the real table controller behind the console. The
// supervisor's view shows the shuffler failing and offers the reset (it
// did not before), the supervisor clicks it: the shuffler leaves its
// fault, the table publishes who reset it (the alarm log shows
// shuffler.reset) and the control goes away; a resume then plays on.
// The shuffler runs on the real clock with short waits; the table on a
// fake one, as in the other browser tests.
func TestBrowserShufflerReset(t *testing.T) {
	bctx := browser(t)
	rs, err := rules.Game("000")
	require.NoError(t, err)
	clk := clockwork.NewFakeClockAt(time.Date(2026, 11, 22, 20, 15, 0, 0, time.UTC))
	topts := table.DefaultOptions(rs)
	topts.Clock = clk
	ctl, err := table.New(topts, zerolog.Nop())
	require.NoError(t, err)

	// The simulated shuffler loses the acknowledgement of every swap.
	dopts := simshuffler.DefaultOptions()
	dopts.Poll, dopts.ShuffleTime, dopts.PullTime, dopts.SwapTime, dopts.AckDelay = 5*time.Millisecond,
		200*time.Millisecond, 50*time.Millisecond, 100*time.Millisecond, 20*time.Millisecond
	dopts.Fault = simshuffler.LostAck
	studio, err := simshuffler.NewStudio(dopts, nil, zerolog.Nop())
	require.NoError(t, err)
	sopts := shuffler.DefaultOptions()
	sopts.Poll, sopts.Debounce, sopts.SwapTimeout = 5*time.Millisecond, 15*time.Millisecond, 500*time.Millisecond
	sh := shuffler.New(shuffler.PinsFromLines(studio.Lines()), sopts, nil, zerolog.Nop())

	hash, err := bcrypt.GenerateFromPassword([]byte("pit-boss-7"), bcrypt.MinCost)
	require.NoError(t, err)
	copts := console.DefaultOptions()
	copts.Addr, copts.Clock, copts.GameName = "127.0.0.1:0", clk, rs.Name
	copts.Supervisors = map[string]string{"giulia": string(hash)}
	var mu sync.Mutex
	var resets []string // by the console's hook, on its handler's goroutine
	copts.ShufflerReset = func(ctx context.Context, by, reason string) error {
		cleared, err := sh.ResetFault(ctx, by, reason)
		if errors.Is(err, shuffler.ErrNotInFault) {
			return fmt.Errorf("%w: %w", console.ErrShufflerNotInFault, err)
		}
		mu.Lock()
		defer mu.Unlock()
		resets = append(resets, by+" cleared "+cleared)
		return err
	}
	health := func() console.Health {
		c := console.Check{Name: console.CheckShuffler, OK: sh.State() != shuffler.Fault, Detail: sh.State().String()}
		if !c.OK {
			c.Detail = sh.Fault()
		}
		return console.Health{Checks: []console.Check{{Name: console.CheckShoe, OK: true, Detail: "SIM-1"}, c}}
	}
	srv, err := console.New(copts, ctl, nil, health, zerolog.New(zerolog.NewTestWriter(t)))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	out, bodies := make(chan table.Input, 16), make(chan table.Body, 64)
	done := make(chan error, 5)
	go func() { done <- ctl.Run(ctx, nil) }()
	go func() { done <- srv.Run(ctx) }()
	go func() { done <- studio.Device.Run(ctx) }()
	go func() { done <- sh.Run(ctx, out, bodies) }()
	go func() { // tabled's forwarding of the shuffler's inputs to the table
		for {
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-bodies:
			case in := <-out:
				if err := ctl.Submit(ctx, in); err != nil && ctx.Err() == nil {
					t.Errorf("table refused the shuffler's %s: %v", in.Kind(), err)
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		for range 5 {
			assert.NoError(t, <-done)
		}
	})
	<-srv.Ready()
	base := "http://" + srv.Addr()
	require.Eventually(t, func() bool { return ctl.Snapshot().Phase == table.PhaseBetting }, 10*time.Second, time.Millisecond)

	sup := newTab(t, bctx, 1440, 1000)
	sup.do(chromedp.Navigate(base + "/supervisor"))
	sup.do(chromedp.WaitVisible(chromedp.CSS("#login")))
	sup.do(
		chromedp.SendKeys(chromedp.CSS("#user"), "giulia"),
		chromedp.SendKeys(chromedp.CSS("#password"), "pit-boss-7"),
		chromedp.Click(chromedp.CSS("#login-submit")),
	)
	sup.waitFor("health shown", `document.querySelector("#health tbody").textContent.indexOf("shuffler") >= 0`, `document.querySelector("#health tbody").textContent`)
	assert.Equal(t, "hidden", sup.eval(`document.getElementById("shuffler-cmd").classList.contains("hidden") ? "hidden" : "shown"`),
		"no reset offered while the shuffler deals")

	// The shoe in play is finished: the swap is asked, and its
	// acknowledgement never comes.
	require.Eventually(t, func() bool { return sh.State() == shuffler.AInPlay_BShuffling }, 5*time.Second, 5*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // B shuffled
	require.NoError(t, sh.RequestSwap(ctx))
	require.Eventually(t, func() bool { return sh.State() == shuffler.Fault }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return ctl.Snapshot().Paused }, 10*time.Second, time.Millisecond, "the alarm pauses the table")

	// The alarm event makes the page read the health at once.
	sup.waitFor("reset offered", `!document.getElementById("shuffler-cmd").classList.contains("hidden") && !document.getElementById("shuffler-reset").disabled`,
		`document.getElementById("shuffler-fault").textContent`)
	assert.Contains(t, sup.text("shuffler-fault"), shuffler.AlarmNoAck)
	sup.waitFor("alarm logged", `document.querySelector("#alarmlog tbody").textContent.indexOf("shuffler.swap_not_acknowledged") >= 0`,
		`document.querySelector("#alarmlog tbody").textContent`)
	sup.screenshot("console-shuffler-fault.png")

	// The technician fixes the acknowledgement line; the supervisor resets.
	studio.Device.SetFault(simshuffler.NoFault)
	sup.do(chromedp.SendKeys(chromedp.CSS("#shuffler-reason"), "swap_done cable reseated"), chromedp.Click(chromedp.CSS("#shuffler-reset")))
	sup.waitText("result", "shuffler_reset: done")
	mu.Lock()
	assert.Equal(t, []string{"giulia cleared " + shuffler.AlarmNoAck}, resets)
	mu.Unlock()
	assert.NotEqual(t, shuffler.Fault, sh.State())
	sup.waitFor("reset journaled and published", `document.querySelector("#alarmlog tbody").textContent.indexOf("shuffler.reset") >= 0`,
		`document.querySelector("#alarmlog tbody").textContent`)
	assert.Contains(t, sup.eval(`document.querySelector("#alarmlog tbody").textContent`),
		"shuffler reset by giulia after swap_not_acknowledged (swap_done cable reseated)")
	sup.waitFor("reset no longer offered", `document.getElementById("shuffler-cmd").classList.contains("hidden")`,
		`document.getElementById("shuffler-fault").textContent`)
	assert.True(t, ctl.Snapshot().Paused, "the reset does not resume the table")

	sup.do(chromedp.Click(chromedp.CSS("#resume")))
	sup.waitText("result", "resume: done")
	assert.False(t, ctl.Snapshot().Paused)
	// The shuffler took shoe B, which the lost swap had seated, as in play.
	require.Eventually(t, func() bool { return sh.State() == shuffler.BInPlay_AShuffling }, 5*time.Second, 5*time.Millisecond)
}
