// Package console serves the dealer's and the supervisor's pages of one
// table from tabled itself: plain HTML, CSS and JavaScript embedded in the
// binary (the studio has no internet, so no CDN and no build step), live
// updates by server-sent events, and the table's health for monitoring.
//
// # Pages
//
//   - "/" is the dealer view, made to be read from a metre away under the
//     camera line: the game and round code, the traffic light and the
//     betting countdown, every seat's cards and total, the dealer's hand
//     with the hole card face down, the shoe's counters, alarms in red, and
//     one instruction line that always says what to do next (the State's
//     round.next).
//   - "/supervisor" is behind a login: pause, resume, void and correct a
//     misread card (each a table.Supervisor input through Table.Submit, the
//     typed error shown as it came back), the shuffler's reset while its
//     health check fails (Options.ShufflerReset: the device's, not a
//     table input), recall of the last rounds with every card and payout,
//     the alarm log and the table's health.
//   - "/healthz" is the Health as JSON (200 when healthy, 503 otherwise);
//     "/metrics" is Prometheus text, each Metrics its own set (see Metrics).
//
// # Live updates
//
// The Server takes one subscription from the table and fans it out to any
// number of browsers. Each browser has its own bounded queue; a browser
// that falls behind is disconnected rather than waited for, and its
// EventSource reconnects and starts again from a fresh snapshot. Nothing a
// browser does can slow the table's subscription, and the table's own
// queue never blocks the card path either (table.Controller.Subscribe).
//
// Every message is the table.Event JSON envelope: kind "state" carries the
// whole snapshot (the pages render from it alone) and the other kinds feed
// the supervisor's logs. A browser receives the current snapshot first.
//
// # Metrics
//
// Each Metrics is a set of its own, written in the Prometheus text format
// by promtext.go (not client_golang: see Metrics). The console counts cards read,
// misreads, alarms and rounds from the events it already receives; the
// integrator feeds publish latency, outbox depth and journal fsync time
// (Metrics.ObservePublishLatency or SetPublishLatencyFunc, SetOutboxDepth
// or SetOutboxDepthFunc, ObserveFsync: the journal's FS option (a vfs.FS) can
// wrap each file so its Sync is timed). A Table that is also a Dropper has its subscribers' lost
// events exported too.
//
// # Recall
//
// Recall is a seam: the daemon adapts its journal to it. Without one the
// console serves History, the last rounds rebuilt from the events it saw
// since it started (every card with its time, the decisions, the
// settlement with every wager and payout).
//
// # Testing
//
// Package consoletest has a fake Table that a test drives by hand. The
// package's own tests include end-to-end runs in headless Chromium against
// a real table.Controller on a fake clock; they fail, not skip, when
// /usr/bin/chromium is missing (`make test` installs it), and with
// LIVETABLE_SCREENSHOTS=1 they refresh docs/console-dealer.png and
// docs/console-supervisor.png.
//
// # Security
//
// The console listens on loopback by default. Supervisors log in with a
// name and password checked against a bcrypt hash (HashPassword makes
// one); failed logins are limited per client address. The session cookie
// is HttpOnly and SameSite=Strict, every POST carries a CSRF token (the
// login form a double-submitted one, the supervisor's commands the one
// bound to the session), and the pages load no inline script, so a strict
// Content-Security-Policy applies.
package console
