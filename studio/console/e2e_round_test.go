package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// holdCommands makes the page's POSTs to /api/command wait until
// releaseCommands: a click whose request travels slowly (a busy network,
// a table slow to answer) while the table moves on. releaseCommands
// sends the held ones and lets the next go straight through.
const holdCommands = `(function () {
  if (window.__held) return "ok";
  window.__held = [];
  var f = window.__fetch = window.fetch;
  window.fetch = function (u, o) {
    if (u !== "/api/command") return f(u, o);
    return new Promise(function (res, rej) { window.__held.push(function () { f(u, o).then(res, rej); }); });
  };
  return "ok";
})()`

const releaseCommands = `(function () {
  var h = window.__held;
  window.fetch = window.__fetch;
  window.__held = null;
  h.forEach(function (g) { g(); });
  return String(h.length);
})()`

// finish plays the round in play to its settlement, dealing cards as the
// instruction line asks and standing whenever a seat decides, then lets
// the settle delay pass so betting reopens.
func (lt *liveTable) finish(cards ...string) {
	lt.t.Helper()
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
	lt.clk.Advance(5 * time.Second)
	lt.waitPhase(table.PhaseBetting)
}

// supervisorTabIn logs giulia in, on the pages in lang.
func supervisorTabIn(t *testing.T, bctx context.Context, lt *liveTable, lang string) *tab {
	t.Helper()
	return loginGiulia(t, bctx, lt.base+"/login?lang="+lang)
}

// TestBrowserVoidAndCorrectNameTheRound is the race the round fence
// (rules epoch 9) closes, as the supervisor meets it in the console: the
// page shows round A; the supervisor presses Void (or Correct) for it;
// before the command reaches the table, A settles and round B starts.
// The command names A, the round the page showed at the click, so the
// table refuses it (wrong_round), round B untouched, and the page says
// in the supervisor's language that the round has moved on and nothing
// changed, and shows the round in play. The same button pressed for B
// then goes in.
func TestBrowserVoidAndCorrectNameTheRound(t *testing.T) {
	bctx := browser(t)
	tests := []struct {
		name, lang string
		// misread: rounds A and B each wait on a card the shoe could
		// not read (the command is a correct).
		misread bool
		// press is the supervisor's click(s) while the page shows A;
		// after, what happens once B has started.
		press, after func(sup *tab)
		// want is the refusal as the page words it (%s: round A).
		want string
	}{
		{"void on its way while the round settles", "en", false,
			func(sup *tab) {
				sup.eval(holdCommands)
				sup.do(chromedp.SendKeys(chromedp.CSS("#void-reason"), "card dropped"), chromedp.Click(chromedp.CSS("#void")))
				sup.waitAttr("#void", "data-armed", "true")
				sup.do(chromedp.Click(chromedp.CSS("#void")))
				sup.waitFor("the void held", `window.__held.length === 1`, `String(window.__held.length)`)
			},
			func(sup *tab) { assert.Equal(t, "1", sup.eval(releaseCommands)) },
			"void refused: round %s is over, the table has moved on. Nothing was changed. The page now shows the round in play: check it, and send the command again only if it is meant for that round."},
		{"void armed on A, confirmed once B shows", "en", false,
			func(sup *tab) {
				sup.do(chromedp.SendKeys(chromedp.CSS("#void-reason"), "card dropped"), chromedp.Click(chromedp.CSS("#void")))
				sup.waitAttr("#void", "data-armed", "true")
			},
			func(sup *tab) {
				// The button still names the round it was armed for.
				assert.Equal(t, "true", sup.eval(`String(document.getElementById("void").textContent.indexOf(document.getElementById("void").getAttribute("data-round")) > 0)`))
				sup.do(chromedp.Click(chromedp.CSS("#void")))
			},
			"void refused: round %s is over, the table has moved on. Nothing was changed. The page now shows the round in play: check it, and send the command again only if it is meant for that round."},
		{"correct on its way while the round is voided and the next one misreads", "en", true,
			func(sup *tab) {
				sup.eval(holdCommands)
				sup.waitAttr("#correct-at", "data-at", "3")
				sup.do(chromedp.SendKeys(chromedp.CSS("#correct-card"), "7d"), chromedp.Click(chromedp.CSS("#correct")))
				sup.waitFor("the correct held", `window.__held.length === 1`, `String(window.__held.length)`)
			},
			func(sup *tab) { assert.Equal(t, "1", sup.eval(releaseCommands)) },
			"correct refused: round %s is over, the table has moved on. Nothing was changed. The page now shows the round in play: check it, and send the command again only if it is meant for that round."},
		{"void on its way while the round settles, in Italian", "it", false,
			func(sup *tab) {
				sup.eval(holdCommands)
				sup.do(chromedp.SendKeys(chromedp.CSS("#void-reason"), "carta caduta"), chromedp.Click(chromedp.CSS("#void")))
				sup.waitAttr("#void", "data-armed", "true")
				assert.Contains(t, sup.text("void"), "Conferma annullamento della mano #")
				sup.do(chromedp.Click(chromedp.CSS("#void")))
				sup.waitFor("the void held", `window.__held.length === 1`, `String(window.__held.length)`)
			},
			func(sup *tab) { assert.Equal(t, "1", sup.eval(releaseCommands)) },
			"void rifiutato: la mano %s è finita, il tavolo è passato alla successiva. Non è stato cambiato nulla. La pagina ora mostra la mano in gioco: controllala e invia di nuovo il comando solo se è per quella mano."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lt := startLiveTable(t)
			lt.submit(table.BetsClosed{Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}}})
			lt.deal("card to seat 1", "Ts")
			lt.deal("card to dealer", "6c")
			if tc.misread {
				lt.submit(table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #3: card unreadable", Pauses: true})
			}
			a := lt.ctl.Snapshot().Round.ID
			sup := supervisorTabIn(t, bctx, lt, tc.lang)
			sup.waitText("round", a)
			tc.press(sup)

			// Round A ends (played out; with a misread another
			// supervisor voids it), round B starts.
			if tc.misread {
				lt.submit(table.Supervisor{Command: "void", By: "marco", Reason: "card unreadable", Round: a})
				lt.clk.Advance(5 * time.Second)
				lt.waitPhase(table.PhaseBetting)
			} else {
				lt.finish("7c", "Ts", "9s")
			}
			lt.submit(table.BetsClosed{Bets: []table.Bet{{Seat: 2, Player: "p2", Main: 2500}}})
			lt.deal("card to seat 2", "8h")
			lt.deal("card to dealer", "Qc")
			if tc.misread {
				lt.submit(table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #6: card unreadable", Pauses: true})
			}
			before := lt.ctl.Snapshot()
			b := before.Round.ID
			require.NotEqual(t, a, b)
			sup.waitText("round", b)

			tc.after(sup)
			sup.waitAttr("#result", "data-kind", "wrong_round")
			assert.Equal(t, fmt.Sprintf(tc.want, a), sup.text("result"))
			assert.Contains(t, sup.eval(`document.getElementById("result").title`), "names round "+a, "the table's own words on hover")
			st := lt.ctl.Snapshot()
			assert.Equal(t, before.Seq, st.Seq, "nothing changed")
			assert.Equal(t, b, st.Round.ID)
			assert.Equal(t, before.Round.Next, st.Round.Next, "round B untouched")
			if tc.misread {
				assert.Equal(t, []int{6}, st.MisreadsAt, "B's card still waits, not filled with A's")
			}
			// The page shows the round in play, and stays live.
			sup.waitText("round", b)
			sup.waitAttr("#offline", "class", "offline hidden")

			// The same button for B goes in.
			if tc.misread {
				sup.waitAttr("#correct-at", "data-at", "6")
				sup.waitFor("the card field cleared", `document.getElementById("correct-card").value === ""`, `document.getElementById("correct-card").value`)
				sup.do(chromedp.SendKeys(chromedp.CSS("#correct-card"), "9h"), chromedp.Click(chromedp.CSS("#correct")))
				sup.waitAttr("#result", "class", "result ok")
				st = lt.ctl.Snapshot()
				assert.Empty(t, st.MisreadsAt)
				require.Len(t, st.Round.Seats, 1)
				assert.Equal(t, card.MustParse("9h"), st.Round.Seats[0].Hands[0].Cards[1], "B's card is the one corrected for B")
				return
			}
			sup.do(chromedp.Click(chromedp.CSS("#void")))
			sup.waitAttr("#void", "data-round", b)
			sup.do(chromedp.Click(chromedp.CSS("#void")))
			sup.waitAttr("#result", "class", "result ok")
			require.Eventually(t, func() bool { return strings.Contains(lt.ctl.Snapshot().Round.Next, "round voided") }, 10*time.Second, time.Millisecond)
			assert.Equal(t, b, lt.ctl.Snapshot().Round.ID)
		})
	}
}
