package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/studio/console/consoletest"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// chromiumPath is Debian's chromium; LIVETABLE_CHROMIUM overrides it.
func chromiumPath() string {
	if p := os.Getenv("LIVETABLE_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// liveTable is a real table controller on a fake clock, behind a real
// console on a free port: the browser sees exactly what a studio would.
type liveTable struct {
	t    *testing.T
	ctl  *table.Controller
	clk  *clockwork.FakeClock
	srv  *console.Server
	base string
}

func startLiveTable(t *testing.T) *liveTable {
	t.Helper()
	rs, err := rules.Game("000")
	require.NoError(t, err)
	clk := clockwork.NewFakeClockAt(time.Date(2026, 11, 22, 20, 15, 0, 0, time.UTC))
	opts := table.DefaultOptions(rs)
	opts.Clock = clk
	ctl, err := table.New(opts, zerolog.Nop())
	require.NoError(t, err)

	hash, err := bcrypt.GenerateFromPassword([]byte("pit-boss-7"), bcrypt.MinCost)
	require.NoError(t, err)
	copts := console.DefaultOptions()
	copts.Addr = "127.0.0.1:0"
	copts.Clock = clk
	copts.GameName = rs.Name
	copts.Supervisors = map[string]string{"giulia": string(hash)}
	health := func() console.Health {
		return console.Health{Checks: []console.Check{
			{Name: console.CheckShoe, OK: true, Detail: "SIM-1 serial SIM0001, firmware 1.0.0"},
			{Name: console.CheckGPIO, OK: true, Detail: "light and shuffler lines"},
			{Name: console.CheckBroker, OK: true, Detail: "tcp://127.0.0.1:1883, outbox 0"},
			{Name: console.CheckJournal, OK: true, Detail: "fsync 0.4 ms"},
			{Name: console.CheckClock, OK: true, Detail: "NTP synchronised"},
		}}
	}
	srv, err := console.New(copts, ctl, nil, health, zerolog.New(zerolog.NewTestWriter(t)))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	ctlDone, srvDone := make(chan error, 1), make(chan error, 1)
	go func() { ctlDone <- ctl.Run(ctx, nil) }()
	go func() { srvDone <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-srvDone)
		assert.NoError(t, <-ctlDone)
	})
	<-srv.Ready()
	lt := &liveTable{t: t, ctl: ctl, clk: clk, srv: srv, base: "http://" + srv.Addr()}
	lt.waitPhase(table.PhaseBetting)
	lt.submit(table.ShoeChanged{ShoeID: "A-0417"})
	return lt
}

func (lt *liveTable) waitPhase(p table.Phase) {
	lt.t.Helper()
	require.Eventually(lt.t, func() bool { return lt.ctl.Snapshot().Phase == p }, 10*time.Second, time.Millisecond,
		"phase %s never reached", p)
}

func (lt *liveTable) submit(in table.Input) {
	lt.t.Helper()
	require.NoError(lt.t, lt.ctl.Submit(context.Background(), in))
}

// deal pulls one card, after checking the instruction line asks for it.
func (lt *liveTable) deal(want, c string) {
	lt.t.Helper()
	require.Equal(lt.t, want, lt.ctl.Snapshot().Round.Next)
	lt.submit(table.CardDrawn{Card: card.MustParse(c)})
	lt.clk.Advance(time.Second) // a dealer's pace, well inside every timer
}

// decide submits a player's decision.
func (lt *liveTable) decide(seat int, action string) {
	lt.t.Helper()
	lt.submit(table.Decision{Seat: seat, Action: action})
	lt.clk.Advance(time.Second)
}

// playRound plays one whole round of the given bets: it deals the cards in
// order as the instruction line asks and stands whenever a seat must
// decide, then lets the settle delay pass so betting reopens.
func (lt *liveTable) playRound(bets []table.Bet, cards ...string) {
	lt.t.Helper()
	lt.waitPhase(table.PhaseBetting)
	lt.submit(table.BetsClosed{Bets: bets})
	for lt.ctl.Snapshot().Phase != table.PhaseSettled {
		next := lt.ctl.Snapshot().Round.Next
		var seat int
		switch {
		case strings.HasPrefix(next, "wait: seat "):
			_, err := fmt.Sscanf(next, "wait: seat %d to decide", &seat)
			require.NoError(lt.t, err)
			lt.decide(seat, "stand")
		case strings.Contains(next, "card to"):
			require.NotEmpty(lt.t, cards, "the round wants more cards: %s", next)
			lt.deal(next, cards[0])
			cards = cards[1:]
		default:
			lt.t.Fatalf("unexpected instruction %q", next)
		}
	}
	require.Empty(lt.t, cards, "cards left over")
	lt.clk.Advance(5 * time.Second) // the settle delay: betting reopens
}

// browser starts headless Chromium with the flags a root CI container
// needs and a fresh profile. No chromium is a failure, not a skip: the
// console is only tested when a browser runs it.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("chromium not found at %s (%v): run `make test`, which installs it (apt-get install -y chromium)", path, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1600, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first Run starts the browser; it must not carry a timeout.
	_, err := chromedp.Run(bctx, chromedp.Evaluate[int]("1"))
	require.NoError(t, err, "chromium does not start")
	return bctx
}

// tab is one browser tab.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func newTab(t *testing.T, bctx context.Context, w, h int64) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(w, h)))
	return &tab{t: t, ctx: ctx}
}

func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	require.NoError(tb.t, chromedp.Do(ctx, steps...))
}

// text is the text content of the element with the id.
func (tb *tab) text(id string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.getElementById(%q)||{}).textContent||""`, id)))
	require.NoError(tb.t, err)
	return strings.TrimSpace(s)
}

// clickNow clicks the element sel selects now, in one step in the page:
// the recall's rows are drawn anew whenever the recall is refreshed (a
// command's answer, the next event), and a click found by one call and
// made by the next hit a row just replaced ("Could not find node with
// given id", once under load).
func (tb *tab) clickNow(sel string) {
	tb.t.Helper()
	require.Equal(tb.t, "clicked", tb.eval(fmt.Sprintf(`(function () { var e = document.querySelector(%q); if (!e) return "none"; e.click(); return "clicked"; })()`, sel)), sel)
}

// eval evaluates a JavaScript expression to a string.
func (tb *tab) eval(expr string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	require.NoError(tb.t, err)
	return s
}

// waitFor polls a JavaScript predicate in the page; on a timeout it says
// what the page showed instead.
func (tb *tab) waitFor(what, predicate string, show string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 15*time.Second)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](predicate, chromedp.WithPollingInterval(20*time.Millisecond)))
		if err == nil {
			return
		}
		// A form post navigates the page under the poll ("navigated or
		// closed", "cannot find context"): poll the new page.
		select {
		case <-ctx.Done():
			tb.t.Fatalf("%s: %v (page shows %q)", what, err, tb.eval(show))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitText waits until the element's text is want.
func (tb *tab) waitText(id, want string) {
	tb.t.Helper()
	tb.waitFor(fmt.Sprintf("#%s = %q", id, want),
		fmt.Sprintf(`(document.getElementById(%q)||{}).textContent === %q`, id, want),
		fmt.Sprintf(`(document.getElementById(%q)||{}).textContent||""`, id))
}

// waitAttr waits until the element's attribute is want.
func (tb *tab) waitAttr(sel, attr, want string) {
	tb.t.Helper()
	tb.waitFor(fmt.Sprintf("%s[%s] = %q", sel, attr, want),
		fmt.Sprintf(`(document.querySelector(%q)||{getAttribute(){return null}}).getAttribute(%q) === %q`, sel, attr, want),
		fmt.Sprintf(`String((document.querySelector(%q)||{getAttribute(){return null}}).getAttribute(%q))`, sel, attr))
}

// cards lists the data-card attributes under a selector, space-separated.
func (tb *tab) cards(sel string) string {
	tb.t.Helper()
	return tb.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(function(e){return e.getAttribute("data-card")}).join(" ")`,
		sel+" .card"))
}

// fits checks the page needs no scrolling and every seat's cards are
// inside the table area: the dealer cannot scroll.
func (tb *tab) fits() {
	tb.t.Helper()
	assert.Equal(tb.t, "fits", tb.eval(`(function(){
		var d = document.documentElement;
		if (d.scrollWidth > innerWidth || d.scrollHeight > innerHeight) return "page " + d.scrollWidth + "x" + d.scrollHeight;
		var area = document.querySelector(".table").getBoundingClientRect();
		var out = Array.from(document.querySelectorAll(".table .card")).filter(function(c){
			var r = c.getBoundingClientRect(); return r.bottom > area.bottom + 1 || r.right > area.right + 1;
		});
		return out.length ? out.length + " cards outside the table" : "fits";
	})()`), "the dealer's screen shows everything without scrolling")
}

// waitCards waits until the cards under a selector are want.
func (tb *tab) waitCards(sel, want string) {
	tb.t.Helper()
	list := fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(function(e){return e.getAttribute("data-card")}).join(" ")`, sel+" .card")
	tb.waitFor(fmt.Sprintf("cards of %s = %q", sel, want), fmt.Sprintf(`%s === %q`, list, want), list)
}

// screenshot saves the whole page: always into the test's temp dir, and
// into docs/ when LIVETABLE_SCREENSHOTS is set (to refresh the committed ones).
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(tb.t, err)
	require.True(tb.t, len(png) > 8 && string(png[1:4]) == "PNG", "screenshot is a PNG")
	require.NoError(tb.t, os.WriteFile(filepath.Join(tb.t.TempDir(), name), png, 0o644))
	if os.Getenv("LIVETABLE_SCREENSHOTS") != "" {
		require.NoError(tb.t, os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644))
		tb.t.Logf("wrote docs/%s (%d bytes)", name, len(png))
	}
}

func TestBrowserDealerAndSupervisor(t *testing.T) {
	bctx := browser(t)
	lt := startLiveTable(t)

	// Two earlier rounds, so recall has history.
	lt.playRound([]table.Bet{{Seat: 1, Player: "p1", Main: 1000}}, "Ts", "7c", "9s", "Kd")
	lt.playRound([]table.Bet{{Seat: 2, Player: "p2", Main: 2500}, {Seat: 5, Player: "p5", Main: 500}},
		"8h", "Qc", "9d", "7d", "Th", "8s")

	dealer := newTab(t, bctx, 1600, 900)
	dealer.do(chromedp.Navigate(lt.base + "/"))

	// Betting: green light, the countdown from the server's deadline.
	dealer.waitText("instruction", "wait: bets open")
	dealer.waitAttr("#light", "data-state", "green")
	assert.Equal(t, "BETS OPEN", dealer.text("phase"))
	assert.Regexp(t, `^(1[0-5]|[0-9]) s$`, dealer.text("countdown-value"), "seconds left of the 15 s betting time")
	assert.Equal(t, "bets close in", dealer.text("countdown-label"), "the countdown says what it counts")
	assert.Equal(t, "Live Blackjack", dealer.text("game-name"))
	assert.Equal(t, "000", dealer.text("game-code"))

	// Last call: the light turns yellow for the last five seconds.
	lt.clk.Advance(10 * time.Second)
	dealer.waitAttr("#light", "data-state", "yellow")
	assert.Equal(t, "LAST CALL", dealer.text("phase"))
	assert.Regexp(t, `^[0-5] s$`, dealer.text("countdown-value"))

	// A scripted round: the instruction line follows every card.
	lt.submit(table.BetsClosed{Bets: []table.Bet{
		{Seat: 1, Player: "p1", Main: 1000},
		{Seat: 3, Player: "p3", Main: 2500, Side: map[string]int64{"perfect_pairs": 500}},
		{Seat: 6, Player: "p6", Main: 5000},
	}})
	dealer.waitText("instruction", "card to seat 1")
	dealer.waitAttr("#light", "data-state", "red")
	round := lt.ctl.Snapshot().Round.ID
	dealer.waitText("round", round)
	lt.deal("card to seat 1", "Td")
	lt.deal("card to seat 3", "9h")
	lt.deal("card to seat 6", "8c")
	lt.deal("card to dealer", "6c")
	dealer.waitCards("#dealer-cards", "6c")
	assert.Equal(t, "card to seat 1", dealer.text("instruction"))
	lt.deal("card to seat 1", "5s")
	lt.deal("card to seat 3", "9d")
	lt.deal("card to seat 6", "3d")
	dealer.waitText("instruction", "hole card to dealer")
	assert.Equal(t, "Td 5s", dealer.cards(`[data-seat="1"]`))
	assert.Equal(t, "9h 9d", dealer.cards(`[data-seat="3"]`))
	lt.deal("hole card to dealer", "Ts")
	dealer.waitText("instruction", "wait: seat 1 to decide")
	assert.Regexp(t, `^([0-9]|10) s$`, dealer.text("countdown-value"), "seconds left of the 10 s decision time")
	assert.Equal(t, "seat 1 decides", dealer.text("countdown-label"))
	assert.Equal(t, "6c back", dealer.cards("#dealer-cards"), "the hole card shows its back")
	assert.Equal(t, "15", dealer.eval(`document.querySelector('[data-seat="1"] .total').firstChild.textContent`))
	assert.Equal(t, "true", dealer.eval(`String(document.querySelector('[data-seat="1"]').classList.contains("active"))`))
	lt.decide(1, "hit")
	dealer.waitText("instruction", "card to seat 1")
	assert.Equal(t, "true", dealer.eval(`String(document.querySelector('[data-seat="1"]').classList.contains("active"))`))
	assert.Equal(t, fmt.Sprint(8*52-18), dealer.text("shoe-left"), "cards left in the 8-deck shoe")
	assert.Equal(t, "18", dealer.text("shoe-dealt"))
	dealer.fits()
	assert.Equal(t, "visible", dealer.eval(`(function(){var r=document.getElementById("round").getBoundingClientRect(); return r.right <= innerWidth ? "visible" : "clipped at " + r.right})()`),
		"the round code is not cut off")
	dealer.screenshot("console-dealer.png")

	// The supervisor logs in: a wrong password is refused first.
	sup := newTab(t, bctx, 1440, 1000)
	sup.do(chromedp.Navigate(lt.base + "/supervisor"))
	sup.do(chromedp.WaitVisible(chromedp.CSS("#login")))
	sup.do(
		chromedp.SendKeys(chromedp.CSS("#user"), "giulia"),
		chromedp.SendKeys(chromedp.CSS("#password"), "wrong-password"),
		chromedp.Click(chromedp.CSS("#login-submit")),
	)
	sup.waitText("login-error", "Wrong name or password.")
	assert.Equal(t, "/login", sup.eval(`location.pathname`))
	assert.Equal(t, "giulia", sup.eval(`document.getElementById("user").value`), "the name is kept, the password is not")
	assert.Equal(t, "", sup.eval(`document.getElementById("password").value`))
	sup.do(
		chromedp.SendKeys(chromedp.CSS("#password"), "pit-boss-7"),
		chromedp.Click(chromedp.CSS("#login-submit")),
	)
	sup.waitText("next", "card to seat 1")
	assert.Equal(t, "giulia", sup.text("user"))
	sup.waitAttr("#light", "data-state", "red")

	// A misread from the shoe: an alarm in red on the dealer's screen.
	lt.submit(table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #57: card unreadable, read it again", Pauses: true})
	// The dealer reads what to do; the engine's words are the supervisor's.
	dealer.waitFor("alarm shown", `document.getElementById("alarms").textContent === "The shoe could not read the card: show it to the supervisor"`, `document.getElementById("alarms").textContent`)
	dealer.waitAttr("#light", "data-state", "red_blink")
	sup.waitFor("alarm logged", `document.querySelector("#alarmlog tbody").textContent.indexOf("shoe.misread") >= 0`, `document.querySelector("#alarmlog tbody").textContent`)
	// The round waits for that card: resume is refused with the table's
	// typed error, which says what to do.
	sup.do(chromedp.Click(chromedp.CSS("#resume")))
	sup.waitAttr("#result", "data-kind", "misread_pending")
	assert.Contains(t, sup.text("result"), "resume refused (misread_pending)")
	assert.Contains(t, sup.text("result"), "correct it with the card on the table, or void the round")
	assert.True(t, lt.ctl.Snapshot().Paused)
	// The supervisor enters the card the dealer shows: the round takes it.
	sup.do(chromedp.SendKeys(chromedp.CSS("#correct-card"), "4h"), chromedp.Click(chromedp.CSS("#correct")))
	sup.waitText("result", "correct: done")
	sup.eval(`(document.getElementById("correct-card").value = "")`)
	dealer.waitText("instruction", "wait: seat 1 to decide")
	dealer.waitText("alarms", "no alarms")

	// Pause with a reason: the light blinks red on both pages and the
	// dealer is told to stop.
	sup.do(chromedp.SendKeys(chromedp.CSS("#pause-reason"), "camera 2 frozen"), chromedp.Click(chromedp.CSS("#pause")))
	sup.waitText("result", "pause: done")
	sup.waitAttr("#light", "data-state", "red_blink")
	dealer.waitText("instruction", "STOP: table paused")
	assert.Equal(t, "Paused by the supervisor: camera 2 frozen", dealer.text("alarms"), "the supervisor's words, not the engine's")
	dealer.waitAttr("#light", "data-state", "red_blink")
	assert.Equal(t, "PAUSED", dealer.text("phase"))
	assert.Equal(t, "true", dealer.eval(`String(document.body.classList.contains("paused"))`))
	dealer.fits()
	assert.Equal(t, "1", dealer.eval(`String(Math.round(document.getElementById("instruction").getBoundingClientRect().height / parseFloat(getComputedStyle(document.getElementById("instruction")).lineHeight)))`),
		"a long instruction shrinks to one line")
	assert.True(t, lt.ctl.Snapshot().Paused)

	// A bad card is refused by the console, a pause twice... the errors
	// are shown as they came.
	sup.do(chromedp.SendKeys(chromedp.CSS("#correct-card"), "Zq"), chromedp.Click(chromedp.CSS("#correct")))
	sup.waitAttr("#result", "data-kind", "bad_request")
	assert.Contains(t, sup.text("result"), "correct refused (bad_request)")

	// Resume: the dealer carries on where he stopped.
	sup.do(chromedp.Click(chromedp.CSS("#resume")))
	sup.waitText("result", "resume: done")
	dealer.waitText("instruction", "wait: seat 1 to decide")
	dealer.waitAttr("#light", "data-state", "red")
	sup.waitAttr("#light", "data-state", "red")
	assert.False(t, lt.ctl.Snapshot().Paused)
	// Resume again: the table's typed error reaches the page.
	sup.do(chromedp.Click(chromedp.CSS("#resume")))
	sup.waitAttr("#result", "data-kind", "illegal_action")
	assert.Contains(t, sup.text("result"), "not paused")

	// Finish the round; it appears in recall with every card and payout.
	lt.decide(1, "stand")
	lt.decide(3, "stand")
	lt.decide(6, "hit")
	lt.deal("card to seat 6", "9s")
	lt.decide(6, "stand")
	lt.deal("card to dealer", "8d")
	lt.waitPhase(table.PhaseSettled)
	dealer.waitText("instruction", "collect and pay")
	// Pay-out: each seat says how it ended and what the dealer moves, in
	// the table's currency.
	dealer.waitFor("pay-out shown", `!!document.querySelector('[data-seat="1"] .payout')`, `document.getElementById("seats").textContent`)
	assert.Equal(t, "WINpay €10.00", dealer.eval(`document.querySelector('[data-seat="1"] .payout').textContent`))
	assert.Contains(t, dealer.eval(`document.querySelector('[data-seat="6"] .payout').textContent`), "WIN")
	dealer.fits()

	sel := fmt.Sprintf(`#recall tr[data-code=%q]`, round)
	sup.waitFor("round settled in recall", fmt.Sprintf(`(document.querySelector(%q)||{cells:[0,0,0,{}]}).cells[3].textContent === "settled"`, sel),
		`document.querySelector("#recall").textContent`)
	assert.Equal(t, "#20:15:33 Td 9h 8c 6c 5s 9d 3d Ts 4h 9s 8d|#20:15:10 8h Qc 9d 7d Th 8s|#20:15:00 Ts 7c 9s Kd",
		sup.eval(`Array.from(document.querySelectorAll("#recall tbody tr")).map(function(r){return r.getAttribute("data-code")+" "+r.cells[2].textContent}).join("|")`),
		"every round in recall with its cards, the most recent first")
	sup.clickNow(sel)
	sup.waitFor("round detail", `document.getElementById("detail").textContent.indexOf("Wagers and payouts") >= 0`, `document.getElementById("detail").textContent`)
	detail := sup.text("detail")
	for _, want := range []string{"Round " + round, "dealer 24 bust", "Td 5s 4h = 19", "+€10.00", "9h 9d = 18", "+€25.00",
		"perfect_pairs", "8c 3d 9s = 20", "+€50.00", "seat 6"} {
		assert.Contains(t, detail, want)
	}
	sup.do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	sup.screenshot("console-supervisor.png")

	// Void a round in play from the page: the button asks twice.
	lt.clk.Advance(5 * time.Second)
	lt.waitPhase(table.PhaseBetting)
	lt.submit(table.BetsClosed{Bets: []table.Bet{{Seat: 4, Player: "p4", Main: 1500}}})
	lt.deal("card to seat 4", "Jc")
	voided := lt.ctl.Snapshot().Round.ID
	sup.waitText("next", "card to dealer")
	sup.do(chromedp.SendKeys(chromedp.CSS("#void-reason"), "card dropped on the floor"), chromedp.Click(chromedp.CSS("#void")))
	sup.waitAttr("#void", "data-armed", "true")
	assert.Equal(t, "card to dealer", lt.ctl.Snapshot().Round.Next, "one click voids nothing")
	sup.do(chromedp.Click(chromedp.CSS("#void")))
	sup.waitText("result", "void: done")
	lt.waitPhase(table.PhaseSettled)
	dealer.waitText("round", voided)
	sel = fmt.Sprintf(`#recall tr[data-code=%q]`, voided)
	sup.waitFor("void in recall", fmt.Sprintf(`(document.querySelector(%q)||{cells:[0,0,0,{}]}).cells[3].textContent === "VOID"`, sel),
		`document.querySelector("#recall").textContent`)
	sup.clickNow(sel)
	sup.waitFor("void detail", `document.getElementById("detail").textContent.indexOf("card dropped on the floor") >= 0`,
		`document.getElementById("detail").textContent`)
}

// crowdedState is the fullest screen a dealer gets: seven seats, a split,
// five-card hands, a common-draw seat, the cut card out, two alarms.
func crowdedState() table.State {
	cs := func(s string) []card.Card {
		out, err := card.ParseList(strings.Fields(s))
		if err != nil {
			panic(err)
		}
		return out
	}
	hand := func(s string, total int, soft bool) round.HandView {
		return round.HandView{Cards: cs(s), Total: total, Soft: soft, Stake: 1000}
	}
	seats := []round.SeatView{
		{Seat: 1, Players: 1, Bet: 1000, Hands: []round.HandView{hand("2d 3c 4h 2s 5d", 16, false)}},
		{Seat: 2, Players: 1, Bet: 50000, Hands: []round.HandView{hand("8h 3c Td", 21, false), hand("8s 9c", 17, false)}},
		{Seat: 3, Players: 1, Bet: 2500, Hands: []round.HandView{hand("As Kd", 21, false)}},
		{Seat: 4, Players: 1, Bet: 100, Hands: []round.HandView{hand("Qc 6d 9s", 25, false)}},
		{Seat: 5, Players: 23, Bet: 1000, Cards: cs("Ah 6c")},
		{Seat: 6, Players: 1, Bet: 7500, Hands: []round.HandView{hand("5c 6h", 11, false)}},
		{Seat: 7, Players: 1, Bet: 1000, Hands: []round.HandView{hand("Ac 2c 3c", 16, true)}},
	}
	return table.State{
		Table: "table7", Game: "002", Phase: table.PhaseDealing,
		Round: round.View{ID: "#21:40:05", Phase: "play", Next: "card to seat 2",
			Dealer: round.HandView{Cards: cs("Th"), Total: 10, Hidden: 1}, Seats: seats},
		Shoe:   table.ShoeState{ID: "B-0031", Decks: 6, Dealt: 244, CutCard: true},
		Alarms: []table.Alarm{{Code: "shoe.face_up", Message: "card came out face up: show it and deal it"}, {Code: "cut_card", Message: "cut card out: this round finishes, then change shoe"}},
	}
}

// TestBrowserCrowdedTableAndOffline: the fullest screen still fits
// without scrolling, and a dealer whose console stops sees at once that
// the screen is no longer live.
func TestBrowserCrowdedTableAndOffline(t *testing.T) {
	bctx := browser(t)
	st := crowdedState()
	fake := consoletest.New(st)
	opts := console.DefaultOptions()
	opts.Addr = "127.0.0.1:0"
	opts.GameName = "Free Bet Blackjack"
	srv, err := console.New(opts, fake, nil, nil, zerolog.Nop())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	<-srv.Ready()

	for _, size := range [][2]int64{{1600, 900}, {1280, 1024}, {1920, 1080}} {
		dealer := newTab(t, bctx, size[0], size[1])
		dealer.do(chromedp.Navigate("http://" + srv.Addr() + "/"))
		dealer.waitText("instruction", "card to seat 2")
		assert.Equal(t, "Th back", dealer.cards("#dealer-cards"))
		assert.Equal(t, "8h 3c Td 8s 9c", dealer.cards(`[data-seat="2"]`), "both hands of the split")
		assert.Equal(t, "23 players", dealer.text("seats")[strings.Index(dealer.text("seats"), "23 players"):][:10])
		assert.Equal(t, "SEEN", dealer.text("shoe-cut-v"))
		assert.Equal(t, fmt.Sprint(6*52-244), dealer.text("shoe-left"))
		assert.Contains(t, dealer.text("alarms"), "A card came out face up: stop, call the supervisor", "the dealer's words")
		assert.NotContains(t, dealer.text("alarms"), "show it and deal it", "not the engine's")
		assert.Contains(t, dealer.eval(`document.querySelector('[data-seat="4"] .total').textContent`), "BUST")
		assert.Contains(t, dealer.eval(`document.querySelector('[data-seat="3"] .total').textContent`), "BJ")
		assert.Equal(t, "red", dealer.eval(`document.getElementById("light").getAttribute("data-state")`))
		dealer.fits()
	}

	dealer := newTab(t, bctx, 1600, 900)
	dealer.do(chromedp.Navigate("http://" + srv.Addr() + "/"))
	dealer.waitText("instruction", "card to seat 2")
	assert.Equal(t, "true", dealer.eval(`String(document.getElementById("offline").classList.contains("hidden"))`))
	cancel()
	require.NoError(t, <-done)
	done <- nil // for the cleanup
	dealer.waitFor("offline shown", `!document.getElementById("offline").classList.contains("hidden")`,
		`document.getElementById("offline").className`)
	assert.Contains(t, dealer.text("offline"), "NO CONNECTION TO THE TABLE")
}

// TestBrowserItalian: the dealer's and the supervisor's pages in Italian,
// chosen with the switch and remembered; amounts in the table's currency
// the Italian way.
func TestBrowserItalian(t *testing.T) {
	bctx := browser(t)
	st := crowdedState()
	fake := consoletest.New(st)
	opts := console.DefaultOptions()
	opts.Addr = "127.0.0.1:0"
	opts.GameName = "Free Bet Blackjack"
	hash, err := bcrypt.GenerateFromPassword([]byte("pit-boss-7"), bcrypt.MinCost)
	require.NoError(t, err)
	opts.Supervisors = map[string]string{"giulia": string(hash)}
	srv, err := console.New(opts, fake, nil, nil, zerolog.Nop())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-srv.Ready()
	base := "http://" + srv.Addr()

	dealer := newTab(t, bctx, 1600, 900)
	dealer.do(chromedp.Navigate(base + "/?lang=it"))
	dealer.waitText("instruction", "carta al posto 2")
	assert.Equal(t, "NIENTE PIÙ PUNTATE", dealer.text("phase"))
	assert.Equal(t, "USCITA", dealer.text("shoe-cut-v"))
	assert.Contains(t, dealer.text("seats"), "POSTO 7")
	assert.Contains(t, dealer.text("seats"), "23 giocatori")
	assert.Contains(t, dealer.text("seats"), "500,00 €", "the seat's bet in euro, Italian style")
	assert.Contains(t, dealer.text("alarms"), "Carta uscita scoperta")
	assert.Contains(t, dealer.eval(`document.querySelector('[data-seat="4"] .total').textContent`), "SBALLA")
	dealer.fits()

	// The choice is remembered; the switch goes back to English.
	dealer.do(chromedp.Navigate(base + "/"))
	dealer.waitText("instruction", "carta al posto 2")
	dealer.do(chromedp.Click(chromedp.CSS(`.langs a[data-lang="en"]`)))
	dealer.waitText("instruction", "card to seat 2")
	assert.Equal(t, "NO MORE BETS", dealer.text("phase"))

	// The supervisor's pages too.
	sup := newTab(t, bctx, 1400, 900)
	sup.do(chromedp.Navigate(base + "/login?lang=it"))
	sup.waitFor("login page", `document.querySelector("h1") && document.querySelector("h1").textContent === "Accesso supervisore"`, `document.body.textContent`)
	sup.do(chromedp.SendKeys(chromedp.CSS("#user"), "giulia"), chromedp.SendKeys(chromedp.CSS("#password"), "wrong"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	sup.waitText("login-error", "Nome o password errati.")
	sup.do(chromedp.SendKeys(chromedp.CSS("#password"), "pit-boss-7"), chromedp.Click(chromedp.CSS("#login-submit")))
	sup.waitText("next", "carta al posto 2")
	assert.Equal(t, "Comandi", sup.eval(`document.querySelectorAll("h2")[1].textContent`))
	assert.Equal(t, "Riprendi", sup.text("resume"))
	assert.Equal(t, "motivo (obbligatorio)", sup.eval(`document.getElementById("pause-reason").placeholder`))
	// The alarm log keeps the engine's wording for the supervisor, beside
	// what the dealer was told.
	fake.Push(table.Event{Time: time.Now(), Table: "table7", Body: table.Alarm{Code: "shoe.face_up", Message: "card came out face up: show it and deal it", Pauses: true}})
	sup.waitFor("alarm logged", `document.querySelector("#alarmlog tbody tr") !== null`, `document.getElementById("alarmlog").textContent`)
	row := sup.eval(`document.querySelector("#alarmlog tbody tr").textContent`)
	assert.Contains(t, row, "card came out face up: show it and deal it")
	assert.Contains(t, row, "Carta uscita scoperta: fermarsi, chiamare il supervisore")
}

// TestBrowserCorrectMisread: the supervisor corrects a card the shoe
// misread from the console: the round takes the card, the table resumes
// (the misread was the only reason to pause) and the dealer is told the
// next step; a second correct, with nothing misread, is refused with the
// table's words.
func TestBrowserCorrectMisread(t *testing.T) {
	bctx := browser(t)
	lt := startLiveTable(t)
	lt.submit(table.BetsClosed{Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	lt.deal("card to seat 1", "Ts")
	lt.deal("card to dealer", "6c")
	lt.submit(table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #3: card unreadable", Pauses: true})
	require.True(t, lt.ctl.Snapshot().Paused)

	dealer := newTab(t, bctx, 1600, 900)
	dealer.do(chromedp.Navigate(lt.base + "/"))
	dealer.waitAttr("#light", "data-state", "red_blink")

	sup := supervisorTab(t, bctx, lt)
	sup.waitAttr("#correct-at", "data-at", "3")
	assert.Equal(t, "next to correct: card 3 of the shoe (1 waiting, corrected in the order drawn)", sup.text("correct-at"))
	sup.do(chromedp.SendKeys(chromedp.CSS("#correct-card"), "7d"), chromedp.Click(chromedp.CSS("#correct")))
	sup.waitText("result", "correct: done")
	st := lt.ctl.Snapshot()
	assert.False(t, st.Paused, "the misread was the only reason to pause")
	assert.Empty(t, st.Misread)
	require.Len(t, st.Round.Seats[0].Hands[0].Cards, 2)
	assert.Equal(t, "7d", st.Round.Seats[0].Hands[0].Cards[1].String(), "the corrected card is the seat's")
	dealer.waitAttr("#light", "data-state", "red")
	dealer.waitText("instruction", st.Round.Next)

	// The card typed was for card 3: corrected, the field is cleared. A
	// correct with nothing to correct names no card and is refused.
	sup.waitAttr("#correct-at", "data-at", "")
	sup.waitFor("the card field cleared", `document.getElementById("correct-card").value === ""`, `document.getElementById("correct-card").value`)
	sup.do(chromedp.SendKeys(chromedp.CSS("#correct-card"), "7d"), chromedp.Click(chromedp.CSS("#correct")))
	sup.waitAttr("#result", "data-kind", "error")
	assert.Contains(t, sup.text("result"), "no misread pending")
}

// TestBrowserCorrectDoubleClick: two cards the shoe could not read wait
// (the shoe's cards 3 and 4); the supervisor types the first and clicks
// Correct twice: in one go, before the page hears anything back, or the
// second after the page has moved on to card 4 (the first one's answer
// and the new state came in between, the field was cleared). Each time
// the second correct names card 3, with the card typed for it: the first
// fills it, the second is refused by the table (misread_at, not a bad
// request for an empty card) and the console says why; card 4 still
// waits, and is not given card 3's value. The field is cleared for card
// 4, whose correct then goes in.
func TestBrowserCorrectDoubleClick(t *testing.T) {
	bctx := browser(t)
	tests := []struct {
		name   string
		clicks func(sup *tab)
	}{
		{"in one go", func(sup *tab) {
			sup.eval(`(function () { var b = document.getElementById("correct"); b.click(); b.click(); return ""; })()`)
		}},
		{"the second after the page moved on", func(sup *tab) {
			sup.do(chromedp.Click(chromedp.CSS("#correct")))
			sup.waitText("result", "correct: done")
			sup.waitAttr("#correct-at", "data-at", "4")
			sup.waitFor("the card field cleared", `document.getElementById("correct-card").value === ""`, `document.getElementById("correct-card").value`)
			sup.do(chromedp.Click(chromedp.CSS("#correct")))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lt := startLiveTable(t)
			lt.submit(table.BetsClosed{Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}}})
			lt.deal("card to seat 1", "Ts")
			lt.deal("card to dealer", "6c")
			lt.submit(table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #3: card unreadable", Pauses: true})
			lt.submit(table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #4: card unreadable", Pauses: true})
			require.Equal(t, []int{3, 4}, lt.ctl.Snapshot().MisreadsAt)

			sup := supervisorTab(t, bctx, lt)
			sup.waitAttr("#correct-at", "data-at", "3")
			assert.Equal(t, "next to correct: card 3 of the shoe (2 waiting, corrected in the order drawn)", sup.text("correct-at"))
			sup.do(chromedp.SendKeys(chromedp.CSS("#correct-card"), "7d"))
			tc.clicks(sup)
			sup.waitAttr("#result", "data-kind", "misread_at")
			res := sup.text("result")
			assert.Contains(t, res, "correct refused (misread_at)")
			assert.Contains(t, res, "card 3 of the shoe was corrected already (7d); the next to correct is card 4 (misread #4: card unreadable): nothing changed")

			st := lt.ctl.Snapshot()
			require.Len(t, st.Round.Seats[0].Hands[0].Cards, 2)
			assert.Equal(t, "7d", st.Round.Seats[0].Hands[0].Cards[1].String(), "card 3 is the seat's")
			assert.Equal(t, []int{4}, st.MisreadsAt, "card 4 still waits, not filled with card 3's value")
			assert.True(t, st.Paused)

			sup.waitAttr("#correct-at", "data-at", "4")
			sup.waitFor("the card field cleared", `document.getElementById("correct-card").value === ""`, `document.getElementById("correct-card").value`)
			sup.do(chromedp.SendKeys(chromedp.CSS("#correct-card"), "9h"), chromedp.Click(chromedp.CSS("#correct")))
			sup.waitText("result", "correct: done")
			st = lt.ctl.Snapshot()
			assert.Empty(t, st.MisreadsAt)
			assert.False(t, st.Paused)
			sup.waitAttr("#correct-at", "data-at", "")
		})
	}
}

// TestBrowserShoeUnplugged: the shoe unplugged in the middle of a round,
// as the dealer and the supervisor see it: the dealer is told to check
// the cable, the supervisor's resume is refused while the shoe is away
// (its kind, shoe_down, and what to do), the replug tells the dealer to
// wait for the supervisor, whose resume then deals the card pulled while
// it was unplugged.
func TestBrowserShoeUnplugged(t *testing.T) {
	bctx := browser(t)
	lt := startLiveTable(t)
	lt.submit(table.BetsClosed{Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	lt.deal("card to seat 1", "Ts")
	lt.submit(table.DeviceAlarm{Source: "shoe", Code: "silent", Pauses: true,
		Message: "silent: shoe disconnected for over 3s (serialport: device hung up)"})
	require.True(t, lt.ctl.Snapshot().Paused)

	dealer := newTab(t, bctx, 1600, 900)
	dealer.do(chromedp.Navigate(lt.base + "/"))
	dealer.waitAttr("#light", "data-state", "red_blink")
	dealer.waitText("instruction", "STOP: the shoe is not connected: check its cable, call a technician")

	sup := supervisorTab(t, bctx, lt)
	sup.waitFor("the engine's instruction", `document.getElementById("next").textContent.indexOf("check its cable") >= 0`,
		`document.getElementById("next").textContent`)
	sup.do(chromedp.Click(chromedp.CSS("#resume")))
	sup.waitAttr("#result", "data-kind", "shoe_down")
	assert.Contains(t, sup.text("result"), "resume refused (shoe_down)")
	assert.Contains(t, sup.text("result"), "plug it back in")

	// The dealer pulled the dealer's card while the shoe was away: the
	// shoe sends it after the HELLO of the replug.
	lt.submit(table.DeviceAlarm{Source: "shoe", Code: "connected", Message: "connected: Livetable SIM-1 serial SIM0001"})
	lt.submit(table.CardDrawn{Card: card.MustParse("6c")})
	dealer.waitText("instruction", "STOP: the shoe is back: wait for the supervisor")
	sup.waitFor("the held card listed", `document.getElementById("next").textContent.indexOf("6c: it goes to the round on resume") >= 0`,
		`document.getElementById("next").textContent`)
	sup.do(chromedp.Click(chromedp.CSS("#resume")))
	sup.waitText("result", "resume: done")
	dealer.waitText("instruction", "card to seat 1")
	dealer.waitCards("#dealer-cards", "6c")
	dealer.waitAttr("#light", "data-state", "red")
}

// supervisorTab opens the supervisor's console in a tab of its own and
// logs giulia in.
func supervisorTab(t *testing.T, bctx context.Context, lt *liveTable) *tab {
	t.Helper()
	return loginGiulia(t, bctx, lt.base+"/supervisor")
}

// loginGiulia opens url in a new tab, which shows the login form, and
// logs the supervisor giulia in.
func loginGiulia(t *testing.T, bctx context.Context, url string) *tab {
	t.Helper()
	sup := newTab(t, bctx, 1440, 1000)
	sup.do(chromedp.Navigate(url))
	sup.do(chromedp.WaitVisible(chromedp.CSS("#login")))
	sup.do(
		chromedp.SendKeys(chromedp.CSS("#user"), "giulia"),
		chromedp.SendKeys(chromedp.CSS("#password"), "pit-boss-7"),
		chromedp.Click(chromedp.CSS("#login-submit")),
	)
	sup.waitText("user", "giulia")
	return sup
}

// TestBrowserStrayCards: three cards the round cannot use, pulled while
// seat 1 decides, as the dealer and the supervisor see them: the first
// stops the table, the dealer is told to put the three aside and wait,
// one resume deals with them all (before the set-aside list each card
// paused the table again, one resume per card), and the dealer's line is
// the round's again.
func TestBrowserStrayCards(t *testing.T) {
	bctx := browser(t)
	lt := startLiveTable(t)
	lt.submit(table.BetsClosed{Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	lt.deal("card to seat 1", "Ts")
	lt.deal("card to dealer", "6c")
	lt.deal("card to seat 1", "7c")
	lt.deal("hole card to dealer", "5h")
	require.Equal(t, "wait: seat 1 to decide", lt.ctl.Snapshot().Round.Next)
	err := lt.ctl.Submit(context.Background(), table.CardDrawn{Card: card.MustParse("8d")})
	require.ErrorIs(t, err, round.ErrUnexpectedCard, "applied, and reported: it does not fit the round")
	lt.submit(table.CardDrawn{Card: card.MustParse("9d")})
	lt.submit(table.CardDrawn{Card: card.MustParse("Kd")})
	st := lt.ctl.Snapshot()
	require.True(t, st.Paused)
	require.Equal(t, []string{"8d", "9d", "Kd"}, st.SetAside)

	dealer := newTab(t, bctx, 1600, 900)
	dealer.do(chromedp.Navigate(lt.base + "/"))
	dealer.waitAttr("#light", "data-state", "red_blink")
	dealer.waitText("instruction", "STOP: put aside 3 card(s): 8d 9d Kd; wait for the supervisor")

	sup := supervisorTab(t, bctx, lt)
	sup.waitFor("the list", `document.getElementById("next").textContent.indexOf("put aside 3 cards: 8d 9d Kd") >= 0`,
		`document.getElementById("next").textContent`)
	sup.do(chromedp.Click(chromedp.CSS("#resume")))
	sup.waitText("result", "resume: done")
	dealer.waitText("instruction", "wait: seat 1 to decide")
	dealer.waitAttr("#light", "data-state", "red")
	dealer.waitText("alarms", "Cards the round does not need: put them aside, no correction: 8d 9d Kd")
	assert.False(t, lt.ctl.Snapshot().Paused, "one resume")
	require.Len(t, lt.ctl.Snapshot().Alarms, 1)
	assert.Contains(t, lt.ctl.Snapshot().Alarms[0].Message, "3 cards set aside (8d 9d Kd)")
}
