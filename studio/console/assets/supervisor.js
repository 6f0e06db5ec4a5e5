// livetable supervisor view: commands, recall, alarm log, health.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  var gameName = document.body.getAttribute("data-game-name") || "Game";
  var light = LT.lightEl();
  $("lightbox").appendChild(light);
  var selected = "";

  var countdown = new LT.Countdown(function (s, label) {
    $("countdown").textContent = s === null ? "" : label + " " + LT.t("countdown.seconds", s);
  });

  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) {
        if (r.status === 401) { window.location = "/login"; throw new Error("logged out"); }
        return r.json().then(function (b) { if (!r.ok) throw new Error(b.error || r.statusText); return b; });
      });
  }

  // send submits one supervisor command and shows the table's verdict,
  // the typed error as it came back when refused. Commands go one after
  // the other, in the order clicked: a double click's second correct
  // reaches the table after the first, and its verdict is the one shown.
  var sending = Promise.resolve();
  function send(body) {
    sending = sending.then(function () { return submit(body); });
    return sending;
  }
  function submit(body) {
    var res = $("result");
    res.className = "result";
    res.removeAttribute("data-kind");
    res.removeAttribute("title");
    res.textContent = LT.t("sv.sending", body.command);
    return fetch("/api/command", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (b) {
        if (r.ok) {
          res.className = "result ok";
          res.textContent = LT.t("sv.done", body.command);
        } else if (b.kind === "wrong_round") {
          // The round the supervisor looked at is over: say so in
          // their words, and show the round in play now (the stream
          // opened again sends the table's state as it is).
          res.className = "result err";
          res.setAttribute("data-kind", b.kind);
          res.textContent = LT.t("sv.wrong_round", body.command, body.round || "");
          res.title = b.error || "";
          reconnect();
          refreshAlarms();
        } else {
          res.className = "result err";
          res.setAttribute("data-kind", b.kind || "");
          res.textContent = LT.t("sv.refused", body.command, b.kind || r.status, b.error || r.statusText);
        }
        refreshRecall();
      });
    }).catch(function (e) {
      res.className = "result err";
      res.textContent = LT.t("sv.failed", body.command, e.message);
    });
  }

  $("pause").addEventListener("click", function () { send({ command: "pause", reason: $("pause-reason").value }); });
  $("resume").addEventListener("click", function () { send({ command: "resume" }); });
  // shownRound is the round the page shows (the state's round id, "" for
  // none). A void and a correct name the round the supervisor saw, so
  // that one that reaches the table after that round settled and the
  // next began is refused (wrong_round) instead of acting on the next.
  var shownRound = "";
  // Void asks twice: the first click arms the button for five seconds
  // (a page dialog would block the whole page, live updates included).
  // The void is for the round shown at the first click, the one the
  // supervisor decided on (the button names it): if that round ends
  // while the button is armed, the confirmation is refused by the
  // table, not turned into a void of the next round.
  var voidArmed = null;
  var voidRound = "";
  $("void").addEventListener("click", function () {
    var b = $("void");
    if (voidArmed === null) {
      if (shownRound === "") {
        var res = $("result");
        res.className = "result err";
        res.setAttribute("data-kind", "no_round");
        res.textContent = LT.t("sv.void_no_round");
        return;
      }
      voidRound = shownRound;
      b.textContent = LT.t("sv.void_confirm", voidRound);
      b.setAttribute("data-armed", "true");
      b.setAttribute("data-round", voidRound);
      voidArmed = setTimeout(disarmVoid, 5000);
      return;
    }
    var r = voidRound;
    disarmVoid();
    send({ command: "void", reason: $("void-reason").value, round: r });
  });
  function disarmVoid() {
    clearTimeout(voidArmed);
    voidArmed = null;
    voidRound = "";
    $("void").textContent = LT.t("sv.void");
    $("void").removeAttribute("data-armed");
    $("void").removeAttribute("data-round");
  }
  // A correct names the card it is for: the position in the shoe of the
  // card the page shows as the next to correct (the state's misread_at),
  // so that a double click, or a second supervisor, whose correct reaches
  // the table after that card was corrected is refused (misread_at)
  // instead of filling the next card with this one's value. When the
  // card shown changes, the card typed for the previous one is cleared,
  // and kept with its position (typedFor): a click on Correct before
  // anything is typed again is the second click of a double click the
  // page heard the first one's answer in between (or a click made before
  // the supervisor saw the change). It is sent as the card typed, for
  // the card it was typed for, so the table refuses it and says why
  // (misread_at: that card was corrected already, and with what), not
  // as a correct with no card. Typing forgets it, and so does the next
  // change of the card shown.
  // The correct names the round shown too (typedFor keeps the round of
  // the card it was typed for).
  var correctAt = 0;
  var typedFor = null;
  $("correct").addEventListener("click", function () {
    var body = { command: "correct", card: $("correct-card").value };
    if (correctAt > 0) body.at = correctAt;
    if (shownRound !== "") body.round = shownRound;
    if (body.card.trim() === "" && typedFor) {
      body.card = typedFor.card;
      body.at = typedFor.at;
      if (typedFor.round) body.round = typedFor.round; else delete body.round;
    }
    send(body);
  });
  $("correct-card").addEventListener("input", function () { typedFor = null; });
  // The shuffler's reset is offered only while its health check fails
  // (latched in its fault, where it refuses every swap): a reset in any
  // other state is refused by the table, since it would drop a swap
  // under way. The health is read again after the answer, and at once
  // when a shuffler alarm comes, not only every 5 s.
  $("shuffler-reset").addEventListener("click", function () {
    $("shuffler-reset").disabled = true;
    send({ command: "shuffler_reset", reason: $("shuffler-reason").value }).then(refreshHealth);
  });
  function showShuffler(check) {
    var fault = !!check && !check.ok;
    $("shuffler-cmd").classList.toggle("hidden", !fault);
    $("shuffler-fault").classList.toggle("hidden", !fault);
    $("shuffler-reset").disabled = !fault;
    $("shuffler-fault").textContent = fault ? LT.t("sv.shuffler_fault", check.detail || "") : "";
    if (!fault) $("shuffler-reason").value = "";
  }
  var correctRound = "";
  function showCorrectAt(st) {
    var at = st.misread_at || 0;
    if (at !== correctAt) {
      var typed = $("correct-card").value;
      typedFor = correctAt > 0 && typed.trim() !== "" ? { card: typed, at: correctAt, round: correctRound } : null;
      correctAt = at;
      correctRound = (st.round || {}).id || "";
      $("correct-card").value = "";
    }
    var el = $("correct-at");
    el.setAttribute("data-at", at ? String(at) : "");
    el.textContent = at ? LT.t("sv.correct_at", at, (st.misreads_at || [at]).length) : "";
  }

  function miniRow(label, cards, hidden, total) {
    var m = $("mini");
    m.appendChild(LT.el("b", null, label));
    var right = LT.el("div");
    right.style.display = "flex";
    right.style.gap = "10px";
    right.style.alignItems = "center";
    right.appendChild(LT.cardsEl(cards, hidden));
    if (total) right.appendChild(LT.el("span", "mono", String(total)));
    m.appendChild(right);
  }

  function render(st, evTime) {
    var rv = st.round || {};
    var ls = LT.lightOf(st);
    light.setAttribute("data-state", ls);
    $("game").textContent = gameName + " " + (st.game || "") + " · " + (st.table || "");
    $("phase").textContent = LT.phaseText(st);
    $("phase").className = "phase " + ls;
    $("round").textContent = rv.id || "—";
    shownRound = rv.id || "";
    countdown.set(st, evTime);
    var next = rv.next || "wait";
    $("next").textContent = LT.nextText(next) + (next.indexOf("stop: ") === 0 ? " — " + next.substring(6) : "");
    $("next").className = "next " + LT.instructionClass(next);
    var pb = $("pausedbanner");
    pb.classList.toggle("hidden", !st.paused);
    pb.textContent = st.paused ? LT.t("sv.paused", st.pause_reason || "") : "";
    showCorrectAt(st);
    $("mini").textContent = "";
    var dh = rv.dealer || {};
    if ((rv.seats || []).length) {
      miniRow(LT.t("sv.dealer"), dh.cards, dh.hidden, dh.total);
      rv.seats.forEach(function (sv) {
        var h = (sv.hands || [])[0];
        miniRow(LT.t("sv.seat", sv.seat), h ? h.cards : sv.cards, 0, h ? h.total : 0);
      });
    } else {
      $("mini").appendChild(LT.el("span", "small", LT.t("seats.none")));
    }
  }

  function onEvent(ev) {
    if (ev.kind === "alarm") {
      prependAlarm({ time: ev.time, round: ev.round, code: ev.data.code, message: ev.data.message, pauses: ev.data.pauses });
    }
    if (ev.kind === "round_settled" || ev.kind === "round_void") refreshRecall();
    if (ev.kind === "alarm" && (ev.data.code || "").indexOf("shuffler.") === 0) refreshHealth();
  }

  function prependAlarm(a) {
    var tb = $("alarmlog").tBodies[0];
    var tr = LT.el("tr");
    tr.appendChild(LT.el("td", "mono", LT.timeOf(a.time)));
    tr.appendChild(LT.el("td", "mono", a.round || ""));
    tr.appendChild(LT.el("td", a.pauses ? "neg" : "", a.code));
    tr.appendChild(LT.el("td", null, a.message));
    tr.appendChild(LT.el("td", "small", LT.alarmText(a.code)));
    tb.insertBefore(tr, tb.firstChild);
    while (tb.rows.length > 200) tb.deleteRow(tb.rows.length - 1);
  }

  function refreshAlarms() {
    getJSON("/api/alarms").then(function (list) {
      $("alarmlog").tBodies[0].textContent = "";
      list.slice().reverse().forEach(prependAlarm);
    }).catch(function () {});
  }

  function refreshHealth() {
    getJSON("/api/health").then(function (h) {
      var tb = $("health").tBodies[0];
      tb.textContent = "";
      if (!h.checks.length) {
        var tr0 = LT.el("tr");
        tr0.appendChild(LT.el("td", "small", LT.t("sv.no_checks")));
        tb.appendChild(tr0);
      }
      var shuffler = null;
      h.checks.forEach(function (c) {
        if (c.name === "shuffler") shuffler = c;
        var tr = LT.el("tr");
        var name = LT.el("td");
        name.appendChild(LT.el("span", c.ok ? "ok-dot" : "bad-dot"));
        name.appendChild(document.createTextNode(c.name));
        tr.appendChild(name);
        tr.appendChild(LT.el("td", c.ok ? "pos" : "neg", LT.t(c.ok ? "sv.ok" : "sv.fault")));
        tr.appendChild(LT.el("td", null, c.detail || ""));
        tb.appendChild(tr);
      });
      showShuffler(shuffler);
    }).catch(function () {});
  }

  // headRow is a table head from catalogue keys.
  function headRow(keys) {
    var th = LT.el("thead");
    var tr = LT.el("tr");
    keys.forEach(function (k) { tr.appendChild(LT.el("th", null, LT.t(k))); });
    th.appendChild(tr);
    return th;
  }

  function netEl(n) {
    return LT.el("td", "mono " + (n > 0 ? "pos" : n < 0 ? "neg" : ""), LT.signed(n));
  }

  function refreshRecall() {
    getJSON("/api/recall").then(function (list) {
      var tb = $("recall").tBodies[0];
      tb.textContent = "";
      list.forEach(function (r) {
        var tr = LT.el("tr", "pick" + (r.code === selected ? " sel" : ""));
        tr.setAttribute("data-code", r.code);
        tr.appendChild(LT.el("td", "mono", r.code));
        tr.appendChild(LT.el("td", "mono", LT.timeOf(r.start)));
        tr.appendChild(LT.el("td", "mono", (r.cards || []).join(" ")));
        tr.appendChild(LT.el("td", null, LT.t(!r.settled ? "sv.in_play" : r.void ? "sv.void_result" : "sv.settled")));
        tr.appendChild(netEl(r.net));
        tr.addEventListener("click", function () { showRound(r.code); });
        tb.appendChild(tr);
      });
      if (!list.length) {
        var tr0 = LT.el("tr");
        tr0.appendChild(LT.el("td", "small", LT.t("sv.no_rounds")));
        tb.appendChild(tr0);
      }
    }).catch(function () {});
  }

  function showRound(code) {
    selected = code;
    getJSON("/api/round?code=" + encodeURIComponent(code)).then(function (d) {
      var box = $("detail");
      box.textContent = "";
      box.classList.remove("hidden");
      box.appendChild(LT.el("h3", null, LT.t("sv.round_title", d.code, d.game,
        LT.t(d.void ? "sv.void_result" : d.settled ? "sv.settled" : "sv.in_play"), LT.signed(d.net))));
      if (d.result) box.appendChild(LT.el("div", "small", d.result));
      var cards = LT.el("table", "list");
      cards.appendChild(headRow(["sv.col.time", "sv.col.card", "sv.col.to", "sv.col.total"]));
      var cb = LT.el("tbody");
      (d.card_log || []).forEach(function (c) {
        var tr = LT.el("tr");
        tr.appendChild(LT.el("td", "mono", LT.timeOf(c.time)));
        tr.appendChild(LT.el("td", "mono", c.card || LT.t("sv.face_down")));
        tr.appendChild(LT.el("td", null, (c.seat ? LT.t("sv.seat", c.seat) + (c.hand > 1 ? " " + LT.t("sv.hand", c.hand) : "") : LT.t("sv.dealer")) + (c.hole ? " " + LT.t("sv.hole") : "")));
        tr.appendChild(LT.el("td", "mono", c.total ? String(c.total) + (c.soft ? " " + LT.t("tag.soft") : "") : ""));
        cb.appendChild(tr);
      });
      cards.appendChild(cb);
      box.appendChild(cards);
      if ((d.decisions || []).length) {
        box.appendChild(LT.el("h3", null, LT.t("sv.decisions")));
        var dt = LT.el("table", "list");
        var db = LT.el("tbody");
        d.decisions.forEach(function (x) {
          var tr = LT.el("tr");
          tr.appendChild(LT.el("td", "mono", LT.timeOf(x.time)));
          tr.appendChild(LT.el("td", null, LT.t("sv.seat", x.seat) + (x.hand > 1 ? " " + LT.t("sv.hand", x.hand) : "")));
          tr.appendChild(LT.el("td", null, x.action + (x.auto ? " " + LT.t("sv.timeout") : "")));
          db.appendChild(tr);
        });
        dt.appendChild(db);
        box.appendChild(dt);
      }
      var s = d.settlement;
      if (s) {
        box.appendChild(LT.el("h3", null, LT.t("sv.wagers", s.dealer.total +
          (s.dealer.blackjack ? " " + LT.t("outcome.blackjack") : s.dealer.bust ? " " + LT.t("outcome.bust") : ""))));
        var pt = LT.el("table", "list");
        pt.appendChild(headRow(["sv.col.seat", "sv.col.player", "sv.col.wager", "sv.col.cards", "sv.col.stake", "sv.col.outcome", "sv.col.net"]));
        var pb = LT.el("tbody");
        (s.seats || []).forEach(function (st) {
          (st.hands || []).forEach(function (h, i) {
            var tr = LT.el("tr");
            tr.appendChild(LT.el("td", null, String(st.seat) + (st.behind ? " " + LT.t("sv.behind") : "")));
            tr.appendChild(LT.el("td", null, st.player || ""));
            tr.appendChild(LT.el("td", null, LT.t("sv.main") + (st.hands.length > 1 ? " " + (i + 1) : "") + (h.doubled ? " ×2" : "")));
            tr.appendChild(LT.el("td", "mono", (h.cards || []).join(" ") + " = " + h.total));
            tr.appendChild(LT.el("td", "mono", LT.money(h.stake)));
            tr.appendChild(LT.el("td", null, LT.t("outcome." + h.outcome)));
            tr.appendChild(netEl(h.net));
            pb.appendChild(tr);
          });
          (st.side || []).forEach(function (sb) {
            var tr = LT.el("tr");
            tr.appendChild(LT.el("td", null, String(st.seat)));
            tr.appendChild(LT.el("td", null, st.player || ""));
            tr.appendChild(LT.el("td", null, sb.kind));
            tr.appendChild(LT.el("td", null, ""));
            tr.appendChild(LT.el("td", "mono", LT.money(sb.stake)));
            tr.appendChild(LT.el("td", null, typeof sb.result === "object" ? JSON.stringify(sb.result) : String(sb.result)));
            tr.appendChild(netEl(sb.net));
            pb.appendChild(tr);
          });
          if (st.insurance) {
            var tr = LT.el("tr");
            tr.appendChild(LT.el("td", null, String(st.seat)));
            tr.appendChild(LT.el("td", null, st.player || ""));
            tr.appendChild(LT.el("td", null, LT.t("sv.insurance")));
            tr.appendChild(LT.el("td", null, ""));
            tr.appendChild(LT.el("td", "mono", LT.money(st.insurance.stake)));
            tr.appendChild(LT.el("td", null, ""));
            tr.appendChild(netEl(st.insurance.net));
            pb.appendChild(tr);
          }
        });
        pt.appendChild(pb);
        box.appendChild(pt);
      }
      (d.notes || []).forEach(function (n) {
        box.appendChild(LT.el("div", "small", LT.timeOf(n.time) + " " + n.text));
      });
      Array.prototype.forEach.call($("recall").tBodies[0].rows, function (tr) {
        tr.classList.toggle("sel", tr.getAttribute("data-code") === code);
      });
    }).catch(function (e) {
      $("detail").classList.remove("hidden");
      $("detail").textContent = LT.t("sv.recall_failed", e.message);
    });
  }

  function onLink(live) {
    $("offline").classList.toggle("hidden", live);
  }
  var stream = LT.connect(render, onEvent, onLink);
  // reconnect opens the event stream again: its first message is the
  // table's state as it is now (after a wrong_round, the page shows the
  // round in play at once, whatever the old stream still had queued).
  function reconnect() {
    stream.close();
    stream = LT.connect(render, onEvent, onLink);
  }
  refreshAlarms();
  refreshHealth();
  refreshRecall();
  setInterval(refreshHealth, 5000);
})();
