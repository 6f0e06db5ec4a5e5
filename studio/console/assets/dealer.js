// livetable dealer view: rendered from each State snapshot alone.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var light = LT.lightEl();
  $("lightbox").appendChild(light);

  var countdown = new LT.Countdown(function (s, label) {
    $("countdown-label").textContent = s === null ? "" : label;
    $("countdown-value").textContent = s === null ? "" : LT.t("countdown.seconds", s);
  });

  // settled is the last round_settled or round_void event: at "collect
  // and pay" each seat shows its outcome and what the dealer pays or
  // collects.
  var settled = null;

  // fit keeps the instruction on one line: the largest size at which it
  // fits the width, down to a floor below which it wraps instead (a long
  // pause reason stays readable and never pushes the table off screen).
  function fit(el) {
    var size = 6.2;
    el.style.whiteSpace = "nowrap";
    el.style.fontSize = size + "em";
    while (el.scrollWidth > el.clientWidth && size > 2.6) {
      size -= 0.2;
      el.style.fontSize = size.toFixed(1) + "em";
    }
    if (el.scrollWidth > el.clientWidth) el.style.whiteSpace = "normal";
  }
  // fitSeats finds the largest seats that show every card: at each size
  // the cards are first laid side by side, then fanned (each covering the
  // previous one but its corner), before the size goes down. Seven seats
  // with split hands still fit; three seats get big cards.
  function fitSeats() {
    var box = $("seats");
    var over = function () {
      return Array.prototype.some.call(box.children, function (s) {
        return s.scrollHeight > s.clientHeight + 1 || s.scrollWidth > s.clientWidth + 1;
      });
    };
    for (var size = 2.0; size > 0.5; size -= 0.05) {
      box.style.fontSize = size.toFixed(2) + "em";
      box.classList.remove("fan");
      if (!over()) return;
      box.classList.add("fan");
      if (!over()) return;
    }
  }
  window.addEventListener("resize", function () { fit($("instruction")); fitSeats(); });

  function activeSeat(next) {
    var m = /seat (\d+)/.exec(next || "");
    return m ? parseInt(m[1], 10) : 0;
  }

  function seatEl(sv, active, payout) {
    var d = LT.el("div", "seat" + (sv.seat === active ? " active" : ""));
    d.setAttribute("data-seat", String(sv.seat));
    var head = LT.el("div", "head");
    head.appendChild(LT.el("span", "num", LT.t("seat.label", sv.seat)));
    if (sv.bet) head.appendChild(LT.el("span", "bet", LT.money(sv.bet)));
    d.appendChild(head);
    if (sv.players > 1) d.appendChild(LT.el("div", "players", LT.t("seat.players", sv.players)));
    var hands = sv.hands && sv.hands.length ? sv.hands : null;
    var hbox = LT.el("div", "hands" + (hands && hands.length > 1 ? " split" : ""));
    d.appendChild(hbox);
    if (hands) {
      hands.forEach(function (h, i) {
        var hd = LT.el("div", "hand" + (h.done ? " done" : ""));
        hd.setAttribute("data-hand", String(i + 1));
        hd.appendChild(LT.cardsEl(h.cards));
        var t = LT.totalEl(h.total, h.soft, (h.cards || []).length, hands.length === 1);
        if (h.doubled) t.appendChild(LT.el("span", "tag soft", "×2"));
        hd.appendChild(t);
        hbox.appendChild(hd);
      });
    } else {
      var hd = LT.el("div", "hand");
      hd.appendChild(LT.cardsEl(sv.cards));
      var tt = LT.total(sv.cards);
      hd.appendChild(LT.totalEl(tt.total, tt.soft, (sv.cards || []).length, true));
      hbox.appendChild(hd);
    }
    if (payout) d.appendChild(payoutEl(payout));
    return d;
  }

  // payoutOf sums a seat's results (every player on it, bets behind
  // included): the outcome of each main hand and the money to move.
  function payoutOf(seat) {
    if (!settled) return null;
    var p = null;
    (settled.data.seats || []).forEach(function (r) {
      if (r.seat !== seat) return;
      p = p || { outcomes: [], net: 0, stake: 0, void: settled.kind === "round_void" };
      if (!r.behind) (r.hands || []).forEach(function (h) { p.outcomes.push(h.outcome); });
      p.net += r.total_net || 0;
      (r.hands || []).forEach(function (h) { p.stake += (h.stake || 0) - (h.free || 0); });
      (r.side || []).forEach(function (sb) { p.stake += sb.stake || 0; });
      if (r.insurance) p.stake += r.insurance.stake || 0;
    });
    return p;
  }

  function payoutEl(p) {
    var d = LT.el("div", "payout " + (p.void ? "void" : p.net > 0 ? "pay" : p.net < 0 ? "collect" : "even"));
    d.appendChild(LT.el("span", "outcome", p.outcomes.map(function (o) { return LT.t("outcome." + o); }).join(" · ")));
    var money;
    if (p.void) money = LT.t("pay.return", LT.money(p.stake));
    else if (p.net > 0) money = LT.t("pay.pay", LT.money(p.net));
    else if (p.net < 0) money = LT.t("pay.collect", LT.money(-p.net));
    else money = LT.t("pay.none");
    d.appendChild(LT.el("span", "amount", money));
    return d;
  }

  function render(st, evTime) {
    var rv = st.round || {};
    var lstate = LT.lightOf(st);
    light.setAttribute("data-state", lstate);
    document.body.classList.toggle("paused", lstate === "red_blink");
    var ph = $("phase");
    ph.textContent = LT.phaseText(st);
    ph.className = "phase " + lstate;
    $("countdown").className = "countdown " + lstate;
    countdown.set(st, evTime);

    $("game-name").textContent = document.body.getAttribute("data-game-name") || "Game";
    $("game-code").textContent = st.game || "";
    $("table").textContent = st.table || "";
    $("round").textContent = rv.id || "—";

    var next = rv.next || "";
    var ins = $("instruction");
    var text = LT.nextText(next);
    if (ins.textContent !== text) {
      ins.textContent = text;
      fit(ins);
    }
    ins.className = "instruction " + LT.instructionClass(next);

    var dh = rv.dealer || {};
    var dc = $("dealer-cards");
    dc.replaceWith((function () { var n = LT.cardsEl(dh.cards, dh.hidden); n.id = "dealer-cards"; return n; })());
    var dt = $("dealer-total");
    dt.replaceWith((function () {
      var n = LT.totalEl(dh.total, dh.soft, (dh.cards || []).length + (dh.hidden || 0), !dh.hidden);
      n.id = "dealer-total";
      return n;
    })());

    var seats = $("seats");
    seats.textContent = "";
    var act = activeSeat(next);
    var paying = settled && settled.round === rv.id && (next === "collect and pay" || st.phase === "settled");
    (rv.seats || []).forEach(function (sv) { seats.appendChild(seatEl(sv, act, paying ? payoutOf(sv.seat) : null)); });
    if (!(rv.seats || []).length) {
      seats.appendChild(LT.el("div", "empty", LT.t(st.phase === "betting" || st.phase === "last_call" ? "seats.bets_open" : "seats.none")));
    }
    fitSeats();

    var shoe = st.shoe || {};
    var total = (shoe.decks || 0) * 52;
    $("shoe-id").textContent = shoe.id || "—";
    $("shoe-dealt").textContent = String(shoe.dealt || 0);
    $("shoe-left").textContent = String(Math.max(0, total - (shoe.dealt || 0)));
    $("shoe-cut-v").textContent = LT.t(shoe.cut_card ? "cut.seen" : "cut.no");
    $("shoe-cut").className = "cut" + (shoe.cut_card ? " yes" : "");
    $("shoe-burn").classList.toggle("hidden", !shoe.burn_pending);
    $("shoe-burn-v").textContent = String(shoe.burn_pending || 0);

    var al = $("alarms");
    al.textContent = "";
    var alarms = st.alarms || [];
    al.className = "alarms" + (alarms.length || st.paused ? " on" : "") + (alarms.length > 1 ? " many" : "");
    // The dealer reads what to do; the engine's wording and the codes are
    // the supervisor's.
    alarms.forEach(function (a) {
      var row = LT.el("div", "alarm");
      row.setAttribute("data-code", a.code);
      row.appendChild(document.createTextNode(LT.alarmText(a.code, a.message)));
      al.appendChild(row);
    });
    if (!alarms.length && st.paused) {
      var row = LT.el("div", "alarm");
      row.setAttribute("data-code", "paused");
      // A supervisor's pause carries the supervisor's own words; a pause
      // the table made itself (a restart mid-round) does not.
      var why = st.pause_reason || "";
      row.appendChild(document.createTextNode(why && !/^restarted/.test(why) ? LT.t("pause.supervisor", why) : LT.t("pause.wait")));
      al.appendChild(row);
    }
    if (!alarms.length && !st.paused) al.appendChild(LT.el("span", "none", LT.t("alarms.none")));
  }

  var last = null;
  LT.connect(function (st, evTime) { last = [st, evTime]; render(st, evTime); }, function (ev) {
    if (ev.kind === "round_settled" || ev.kind === "round_void") {
      settled = ev;
      if (last) render(last[0], last[1]);
    }
  }, function (live) {
    $("offline").classList.toggle("hidden", live);
  });
})();
