package table

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/livetable/livetable/table/card"
)

// This file is the shoe's integrity book, part of the Machine: what the
// shoe in play has dealt (composition, unique RFID codes, dealing order,
// count) and the shuffle check against the last few shoes. It lived in
// the shoe reader's memory until the reader became a transport and codec:
// a restart forgot it, so a ninth A♠ of an 8-deck shoe passed when five
// came before a SIGKILL and four after. Now every card reaches it as a
// journaled input and a checkpoint carries it (ShoeBook), so the checks
// continue across any restart exactly where they were.

// IntegrityReason says which integrity rule a card or a shoe broke.
type IntegrityReason string

// Integrity reasons the machine finds (the stateless ones, a code that is
// no card or names another card, are the shoe codec's: shoereader).
const (
	// OverCount: more of this card than the shoe's decks hold.
	OverCount IntegrityReason = "over count"
	// DuplicateCode: the same unique card code twice in one shoe.
	DuplicateCode IntegrityReason = "duplicate code"
	// CountMismatch: at shoe out, dealt plus returned is not the shoe.
	CountMismatch IntegrityReason = "count mismatch"
)

// ShoeBook is the serialised integrity book of a Checkpoint: the shoe in
// play and the finished shoes the shuffle check compares it with. The
// composition and the count are rebuilt from Order.
type ShoeBook struct {
	ID string `json:"id,omitempty"`
	// Started is set when the shoe's SHOE_IN was seen: only then is the
	// dealt count the whole shoe's and checked at shoe out.
	Started bool `json:"started,omitempty"`
	// Order is every card booked from this shoe, in dealing order, as
	// concatenated two-character cards ("AsTd...").
	Order string `json:"order,omitempty"`
	// Codes are the unique RFID codes seen in this shoe.
	Codes []string `json:"codes,omitempty"`
	// Past are the finished shoes the shuffle check compares with.
	Past []PastShoe `json:"past,omitempty"`
	// ShuffleAlarmed is set once this shoe raised its shuffle alarm.
	ShuffleAlarmed bool `json:"shuffle_alarmed,omitempty"`
	// Unread is how many cards this shoe dealt that it could not read
	// and no supervisor corrected: out of the shoe, in no composition.
	Unread int `json:"unread,omitempty"`
}

// PastShoe is one finished shoe's dealing order.
type PastShoe struct {
	ID    string `json:"id,omitempty"`
	Order string `json:"order"`
}

// shoeBook is the live form of ShoeBook.
type shoeBook struct {
	decks   int
	id      string
	started bool
	comp    card.Composition
	codes   map[string]struct{}
	order   []card.Card
	unread  int // cards dealt that the shoe could not read, not corrected
	shuffle shuffleCheck
	// gen counts the shoes finished since the machine was built or
	// restored: a card waiting for a correction names the shoe it came
	// out of (pulled.shoe). Not checkpointed: no card waits at a
	// checkpoint.
	gen int
}

func newShoeBook(decks, run, history int) shoeBook {
	return shoeBook{decks: decks, comp: card.NewComposition(decks), codes: map[string]struct{}{},
		shuffle: shuffleCheck{threshold: run, history: history}}
}

// check reports the integrity rule card c (with RFID code, "" for none)
// breaks, "" when it may be booked. It changes nothing.
func (b *shoeBook) check(c card.Card, code string) IntegrityReason {
	if code != "" {
		if _, dup := b.codes[code]; dup {
			return DuplicateCode
		}
	}
	if b.comp.Count(c) == 0 {
		return OverCount
	}
	return ""
}

// take books a card that passed check and returns the longest run it
// extends in a past shoe's order, with that shoe's id.
func (b *shoeBook) take(c card.Card, code string) (run int, past string) {
	_ = b.comp.Take(c) // cannot fail: check saw one left
	if code != "" {
		b.codes[code] = struct{}{}
	}
	b.order = append(b.order, c)
	run, p := b.shuffle.add(c)
	if p != nil {
		past = p.id
	}
	return run, past
}

// dealt is how many cards this shoe has booked.
func (b *shoeBook) dealt() int { return len(b.order) }

// finish files the shoe's order in the shuffle history and starts an
// empty book (not started: a SHOE_IN starts it).
func (b *shoeBook) finish() {
	b.shuffle.endShoe(b.id, b.order)
	b.id, b.started = "", false
	b.comp = card.NewComposition(b.decks)
	b.codes = map[string]struct{}{}
	b.order = nil
	b.unread = 0
	b.gen++
}

// countError is the shoe-out check: "" when dealt (read, and dealt
// unread: a misread no supervisor corrected) plus returned is the shoe,
// or when the shoe's start was not seen.
func (b *shoeBook) countError(returned int) string {
	want := b.decks * card.DeckSize
	if !b.started || b.dealt()+b.unread+returned == want {
		return ""
	}
	unread := ""
	if b.unread > 0 {
		unread = fmt.Sprintf(" + %d unread", b.unread)
	}
	return fmt.Sprintf("shoe %q: %s: %d dealt%s + %d returned = %d cards, composition is %d",
		b.id, CountMismatch, b.dealt(), unread, returned, b.dealt()+b.unread+returned, want)
}

// save is the book's checkpoint form, nil when it holds nothing (a table
// that never had a shoe announced).
func (b *shoeBook) save() *ShoeBook {
	if b.id == "" && !b.started && len(b.order) == 0 && len(b.shuffle.past) == 0 && b.unread == 0 {
		return nil
	}
	sb := &ShoeBook{ID: b.id, Started: b.started, Order: cardString(b.order), ShuffleAlarmed: b.shuffle.alarmed, Unread: b.unread}
	for code := range b.codes {
		sb.Codes = append(sb.Codes, code)
	}
	slices.Sort(sb.Codes)
	for _, p := range b.shuffle.past {
		sb.Past = append(sb.Past, PastShoe{ID: p.id, Order: cardString(p.order)})
	}
	return sb
}

// load rebuilds the book from its checkpoint form: the past shoes' index,
// then the shoe in play card by card, so the shuffle check's runs are
// where they were.
func (b *shoeBook) load(sb *ShoeBook) error {
	fresh := newShoeBook(b.decks, b.shuffle.threshold, b.shuffle.history)
	*b = fresh
	if sb == nil {
		return nil
	}
	for _, p := range sb.Past {
		order, err := parseCardString(p.Order)
		if err != nil {
			return err
		}
		b.shuffle.endShoe(p.ID, order)
	}
	order, err := parseCardString(sb.Order)
	if err != nil {
		return err
	}
	b.id, b.started = sb.ID, sb.Started
	if sb.Unread < 0 || sb.Unread > b.decks*card.DeckSize {
		return fmt.Errorf("table: checkpoint shoe %q: %d cards unread", sb.ID, sb.Unread)
	}
	b.unread = sb.Unread
	for _, code := range sb.Codes {
		b.codes[code] = struct{}{}
	}
	for _, c := range order {
		if b.comp.Count(c) == 0 {
			return fmt.Errorf("table: checkpoint shoe %q holds more %s than %d decks", sb.ID, c, b.decks)
		}
		_ = b.comp.Take(c)
		b.order = append(b.order, c)
		b.shuffle.add(c)
	}
	b.shuffle.alarmed = sb.ShuffleAlarmed
	return nil
}

func cardString(cs []card.Card) string {
	var sb strings.Builder
	sb.Grow(2 * len(cs))
	for _, c := range cs {
		sb.WriteString(c.String())
	}
	return sb.String()
}

func parseCardString(s string) ([]card.Card, error) {
	if len(s)%2 != 0 {
		return nil, fmt.Errorf("table: card list %q: odd length", s)
	}
	out := make([]card.Card, 0, len(s)/2)
	for i := 0; i < len(s); i += 2 {
		c, err := card.Parse(s[i : i+2])
		if err != nil {
			return nil, fmt.Errorf("table: card list: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// pastShoe is a finished shoe's dealing order, indexed for run matching.
type pastShoe struct {
	id    string
	order []card.Card
	pos   [card.DeckSize][]int32 // positions of each card in order
	runs  []run                  // alignments ending at the previous new card
	next  []run                  // scratch for the current card
}

type run struct{ at, length int32 }

// shuffleCheck compares the shoe in play with the last few finished shoes.
// A run is a stretch of consecutive cards of the new shoe that were also
// consecutive, in the same order, in an old shoe.
type shuffleCheck struct {
	threshold int
	history   int
	past      []*pastShoe
	alarmed   bool
}

// add matches the next dealt card against every past shoe and reports the
// longest run it ends, and in which past shoe.
func (s *shuffleCheck) add(c card.Card) (longest int, with *pastShoe) {
	ci := c.Index()
	for _, p := range s.past {
		p.next = p.next[:0]
		for _, j := range p.pos[ci] {
			l := int32(1)
			for _, r := range p.runs {
				if r.at == j-1 {
					l = r.length + 1
					break
				}
			}
			p.next = append(p.next, run{at: j, length: l})
			if int(l) > longest {
				longest, with = int(l), p
			}
		}
		p.runs, p.next = p.next, p.runs
	}
	return longest, with
}

// endShoe files a finished shoe's order and resets for a new shoe.
func (s *shuffleCheck) endShoe(id string, order []card.Card) {
	s.alarmed = false
	for _, p := range s.past {
		p.runs = p.runs[:0]
	}
	if len(order) < s.threshold {
		return
	}
	p := &pastShoe{id: id, order: append([]card.Card(nil), order...)}
	for i, c := range p.order {
		p.pos[c.Index()] = append(p.pos[c.Index()], int32(i))
	}
	s.past = append(s.past, p)
	if len(s.past) > s.history {
		s.past = s.past[1:]
	}
}

// ShuffleFalseAlarmRate is the expected number of false shuffle alarms per
// shoe when every shoe is properly shuffled: decks decks, an alarm at a run
// of run cards, compared with history previous shoes. A given card of the
// new shoe is followed by the same card as in a given old shoe with
// probability decks/(n-1) for each of that card's decks copies; a run of
// run cards needs run-1 such matches in a row, from any of n*decks starting
// alignments per old shoe.
func ShuffleFalseAlarmRate(decks, run, history int) float64 {
	n := float64(decks * card.DeckSize)
	q := float64(decks) / (n - 1)
	return float64(history) * n * float64(decks) * math.Pow(q, float64(run-1))
}

// DefaultShuffleRun and DefaultShuffleHistory are the shuffle check's
// defaults: a run of 7 cards in the same order as one of the last 4 shoes
// (fewer than one false alarm in a million 8-deck shoes:
// ShuffleFalseAlarmRate).
const (
	DefaultShuffleRun     = 7
	DefaultShuffleHistory = 4
)

// shoeLink is the shoe's connection as the table was told it: by the
// reader's journaled alarms, so a replay knows it too.
type shoeLink uint8

const (
	// shoeUp: connected, or never reported otherwise.
	shoeUp shoeLink = iota
	// shoeDown: reported disconnected or silent (shoe.silent) and not
	// heard since. The table is paused (PauseDevice) and stays paused
	// while it lasts: resume is refused (ErrShoeDown), a void ends the
	// round but not the pause. So a checkpoint, taken only on an
	// unpaused table, never finds it.
	shoeDown
	// shoeBack: heard again after shoeDown, the table still paused: the
	// supervisor resumes (the cards pulled meanwhile go to the round).
	shoeBack
)

// shoeLinkAlarm books what the shoe's alarms say about its link: a
// pausing shoe.silent (disconnected, or connected and mute) takes it
// down; a non-pausing shoe.connected or shoe.alive, which the bridge
// submits for every reconnection, brings it back, as an alarm of its own
// that pauses nothing, so the supervisor sees the shoe is back; when the
// shoe was not down it is refused (ErrShoeUp), so a table that was never
// told of a loss journals nothing at each reconnection. done is false
// for every other alarm.
func (m *Machine) shoeLinkAlarm(v DeviceAlarm) (done bool, err error) {
	switch {
	case m.epoch < epochPauseFlow:
		return false, nil // an older build's journal: a silence paused, no more
	case v.Code == "silent" && v.Pauses:
		m.link = shoeDown
		return false, nil // raised as an alarm, pausing, as before
	case (v.Code == "connected" || v.Code == "alive") && !v.Pauses:
		if m.link != shoeDown {
			return true, fmt.Errorf("%w: %s", ErrShoeUp, v.Message)
		}
		m.link = shoeBack
		m.alarm("shoe."+v.Code, v.Message, "")
		return true, nil
	}
	return false, nil
}

// unreadCard books a card the shoe dealt and could not read (a pausing
// misread, unknown or face-up card): out of the shoe, so the count at
// shoe out adds it. When the round waits for a card it is the round's
// (cardMissing has made it the pending misread): the supervisor must
// correct it or void the round, never resume past it.
func (m *Machine) unreadCard() {
	if m.epoch < epochPauseFlow {
		return // an older build's journal: resumed past, and not counted
	}
	if m.shoeActive() {
		m.shoe.unread++
	}
	if m.misread != "" && !m.misreadUnread {
		m.misreadUnread = true
	}
}

// correctedUnread: the pending misread is corrected; when it was a card
// dealt unread, that card is now booked, so no longer counted unread.
func (m *Machine) correctedUnread() {
	if m.misreadUnread && m.shoe.unread > 0 {
		m.shoe.unread--
	}
	m.misreadUnread = false
}

// resumeRefused is why a supervisor's resume is refused, nil when it
// may go: a card the round is missing lies on the table unread, or the
// shoe is down (the round and the next one need it).
func (m *Machine) resumeRefused() error {
	switch next, n := m.unreadWaiting(); {
	case n == 1:
		return fmt.Errorf("%w (%s): correct it with the card on the table%s", ErrMisreadPending, next, m.orVoid(", or void the round"))
	case n > 1:
		return fmt.Errorf("%w (%d cards, the next to correct: %s): correct them with the cards on the table, in the order the dealer drew them%s",
			ErrMisreadPending, n, next, m.orVoid(", or void the round"))
	}
	if m.misreadUnread {
		return fmt.Errorf("%w (%s): correct it with the card on the table%s", ErrMisreadPending, m.misread, m.orVoid(", or void the round"))
	}
	if m.link == shoeDown && m.voided {
		// Voided already: the only way on is the shoe.
		return fmt.Errorf("%w: the round is voided; plug the shoe back in and resume once it is back", ErrShoeDown)
	}
	if m.link == shoeDown {
		return fmt.Errorf("%w: plug it back in (the cards pulled meanwhile wait in it and come with it)%s; resume once it is back", ErrShoeDown, m.orVoid(" or void the round"))
	}
	return nil
}

// shoeLinkNext is the instruction line of a table paused while the shoe
// is down or just back: what the dealer and the supervisor do.
func (m *Machine) shoeLinkNext() string {
	switch {
	case m.voided && m.link == shoeDown:
		// The supervisor voided the round while the shoe was down: the
		// line told them to void it still, and the dealer nothing of
		// the cards on the table.
		return "stop: round voided: clear the cards; shoe not connected: check its cable; supervisor resumes once it is back"
	case m.voided:
		return "stop: round voided: clear the cards; shoe connected again: supervisor resumes"
	}
	if m.link == shoeDown {
		return "stop: shoe not connected: check its cable; the cards pulled meanwhile come when it is back; supervisor resumes then" + m.orVoid(", or voids the round") + m.heldNote()
	}
	return "stop: shoe connected again: supervisor checks the cards on the table and resumes" + m.heldNote()
}

// heldNote tells the instruction line of a paused table about the cards
// pulled during the pause: booked, and placed in dealing order when it
// resumes.
func (m *Machine) heldNote() string {
	var cs []string
	for _, h := range m.held {
		if !h.waiting() { // a card waiting for a correction is the misread line's
			cs = append(cs, h.card.String())
		}
	}
	switch {
	case len(cs) == 0:
		return ""
	case len(cs) == 1:
		return fmt.Sprintf(" (1 card pulled during the pause, %s: it goes to the round on resume)", cs[0])
	case m.epoch >= epochSetAside:
		// Held because the table needed a card: the round takes them
		// only as far as it still needs cards (machine_aside.go).
		return fmt.Sprintf(" (%d cards pulled during the pause, %s: on resume the round takes them in that order as far as it needs cards; any left are set aside)",
			len(cs), strings.Join(cs, " "))
	default:
		return fmt.Sprintf(" (%d cards pulled during the pause, %s: they go to the round on resume, in that order)", len(cs), strings.Join(cs, " "))
	}
}

// AlarmRepeatWindow is how long a paused table takes no second alarm of
// the same code from a device (coalesce): at most one of each code a
// minute reaches the journal and the events, however fast a device
// repeats it.
const AlarmRepeatWindow = time.Minute

// coalesce refuses (ErrAlarmRepeated) a device alarm that repeats one the
// table is still paused by, raised less than AlarmRepeatWindow ago by the
// inputs' own times (journaled: a replay decides the same): a device
// refused at every HELLO of a firmware loop, a fault sent at line rate,
// journaled and published each time, grew the journal and the event
// stream without bound while the table stood paused. The first always
// goes, and one a window after; a resume starts afresh. An alarm whose
// time is before the last one's (from epochClockBack) goes too, and the
// window starts from it: the inputs carry wall times only (journaled as
// the replay has them), and with the wall clock stepped back an hour by
// NTP while paused (the controller's monotonic anchor holds only while a
// player's timer runs, and a paused table runs none), the window lasted
// that hour as well, the supervisor seeing none of the device's alarms
// meanwhile. A step back lets one more alarm through; it cannot flood.
// Alarms about cards (a misread, an unknown or face-up card, an
// integrity alarm, two cards at once) are never coalesced: each is a
// card on the table.
func (m *Machine) coalesce(v DeviceAlarm) error {
	if m.epoch < epochPauseFlow {
		return nil // an older build's journal: every alarm was taken
	}
	if !v.Pauses || !m.paused() || v.Source == "journal" || !coalescable(v.Code) {
		m.noteRepeat(v)
		return nil
	}
	key := v.Source + "." + v.Code
	if at, ok := m.repeatAt[key]; ok && m.now.Sub(at) < AlarmRepeatWindow && (m.now.Compare(at) >= 0 || m.epoch < epochClockBack) {
		return fmt.Errorf("%w: %s within %v of the last, the table still paused", ErrAlarmRepeated, key, AlarmRepeatWindow)
	}
	m.noteRepeat(v)
	return nil
}

// noteRepeat records when a coalescable pausing alarm is raised.
func (m *Machine) noteRepeat(v DeviceAlarm) {
	if !v.Pauses || v.Source == "journal" || !coalescable(v.Code) {
		return
	}
	if m.repeatAt == nil {
		m.repeatAt = map[string]time.Time{}
	}
	m.repeatAt[v.Source+"."+v.Code] = m.now
}

// coalescable reports whether repeats of a device alarm code may be
// coalesced: none of the alarms about a card, nor the shoe's silence
// (once per silence: it cannot flood, and it takes the link down).
func coalescable(code string) bool {
	switch code {
	case "misread", "unknown_card", "face_up", "integrity_alarm", "double_card", "silent":
		return false
	}
	return true
}

// gapShoeNote is what the line of a table paused by an accepted loss
// (SeqGap) adds while the shoe in play is the one of the restore: the
// journal restored from a backup has the shoe's record as it was then,
// without the cards dealt since (docs/deploy.md, restore: change the
// shoe before resuming), so the over-count and code checks would miss
// those cards and its count at shoe out would not match. The line said
// only "table paused" and a supervisor following it resumed on it.
func (m *Machine) gapShoeNote() string {
	if !m.gapAt || m.shoeID != m.gapShoe || !slices.Contains(m.pauses, PauseSeqGap) || m.shoeID == "" {
		return ""
	}
	return "; change the shoe before resuming: its cards dealt after the backup are not in the table's record of it"
}
