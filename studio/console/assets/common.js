// livetable console: what the dealer and supervisor pages share. Plain
// browser JavaScript, no build step and no library: the studio is offline.
"use strict";

var LT = (function () {
  var SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };

  // The page's language and its catalogue (assets/i18n/{lang}.json), put
  // in the page by the server: every word the pages show comes from it.
  var html = document.documentElement;
  var LANG = html.getAttribute("lang") || "en";
  var CAT = {};
  try { CAT = JSON.parse(html.getAttribute("data-i18n") || "{}"); } catch (e) { CAT = {}; }
  var CURRENCY = html.getAttribute("data-currency") || "EUR";

  // t returns the catalogue's text for key with {0}, {1}... filled in;
  // a key missing from the catalogue shows as itself (the tests forbid it).
  function t(key) {
    var s = Object.prototype.hasOwnProperty.call(CAT, key) ? CAT[key] : key;
    var args = arguments;
    return s.replace(/\{(\d+)\}/g, function (m, i) {
      var v = args[parseInt(i, 10) + 1];
      return v === undefined ? m : String(v);
    });
  }
  function has(key) { return Object.prototype.hasOwnProperty.call(CAT, key); }

  // applyI18n fills the static text of the page: data-t for an element's
  // text, data-t-placeholder for an input's placeholder.
  function applyI18n(root) {
    Array.prototype.forEach.call((root || document).querySelectorAll("[data-t]"), function (e) {
      e.textContent = t(e.getAttribute("data-t"));
    });
    Array.prototype.forEach.call((root || document).querySelectorAll("[data-t-placeholder]"), function (e) {
      e.setAttribute("placeholder", t(e.getAttribute("data-t-placeholder")));
    });
  }
  applyI18n();

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  // cardEl draws one card from its wire form ("Td"); null draws a back.
  function cardEl(c) {
    if (!c) {
      var b = el("div", "card back");
      b.setAttribute("data-card", "back");
      b.title = t("card.back");
      return b;
    }
    var rank = c.charAt(0) === "T" ? "10" : c.charAt(0);
    var suit = c.charAt(1);
    var d = el("div", "card" + (suit === "h" || suit === "d" ? " red" : ""));
    d.setAttribute("data-card", c);
    d.title = c;
    // The corner holds rank and suit, so a card half covered by the next
    // one in a fanned hand still reads.
    var corner = el("span", "corner");
    corner.appendChild(el("span", "rank", rank));
    corner.appendChild(el("span", "pip", SUITS[suit] || "?"));
    d.appendChild(corner);
    d.appendChild(el("span", "suit", SUITS[suit] || "?"));
    return d;
  }

  function cardsEl(cards, hidden) {
    var box = el("div", "cards");
    (cards || []).forEach(function (c) { box.appendChild(cardEl(c)); });
    for (var i = 0; i < (hidden || 0); i++) box.appendChild(cardEl(null));
    return box;
  }

  // value and total compute a hand's total when the view has none (the
  // shared cards of a common-draw seat).
  function value(c) {
    var r = c.charAt(0);
    if (r === "A") return 1;
    if ("TJQK".indexOf(r) >= 0) return 10;
    return parseInt(r, 10);
  }
  function total(cards) {
    var t = 0, ace = false;
    (cards || []).forEach(function (c) { t += value(c); if (c.charAt(0) === "A") ace = true; });
    if (ace && t + 10 <= 21) return { total: t + 10, soft: true };
    return { total: t, soft: false };
  }

  // totalEl shows a total with its tag: soft, bust, blackjack.
  function totalEl(tot, soft, n, single) {
    var d = el("span", "total");
    if (!n) { d.textContent = ""; return d; }
    d.textContent = String(tot);
    var tag = null;
    if (tot > 21) tag = el("span", "tag bust", t("tag.bust"));
    else if (tot === 21 && n === 2 && single) tag = el("span", "tag bj", t("tag.bj"));
    else if (soft) tag = el("span", "tag soft", t("tag.soft"));
    if (tag) d.appendChild(tag);
    return d;
  }

  // lightOf derives the traffic light from the table's phase, as the
  // tower (studio/light) does: green while bets are open, yellow at last
  // call, red otherwise, blinking red while paused or after an alarm that
  // paused the table.
  function lightOf(st) {
    var alarmed = (st.alarms || []).some(function (a) { return a.pauses; });
    if (st.paused || st.phase === "paused" || alarmed) return "red_blink";
    if (st.phase === "betting") return "green";
    if (st.phase === "last_call") return "yellow";
    return "red";
  }
  function phaseText(st) {
    if (st.paused) return t("phase.paused");
    return has("phase." + st.phase) ? t("phase." + st.phase) : String(st.phase || "").toUpperCase();
  }

  // NEXT maps the table's instruction (table/round Next, in English) to
  // the catalogue's words.
  var NEXT = [
    [/^card to seat (\d+)$/, "next.card_to_seat"], [/^card to dealer$/, "next.card_to_dealer"],
    [/^hole card to dealer$/, "next.hole_card"], [/^wait: insurance offered$/, "next.insurance"],
    [/^wait: seat (\d+) to decide$/, "next.wait_decide"], [/^collect and pay$/, "next.collect_pay"],
    [/^wait for bets$/, "next.wait_bets"], [/^wait: bets open$/, "next.bets_open"], [/^wait$/, "next.wait"], [/^change shoe$/, "next.change_shoe"],
    [/^burn one card$/, "next.burn"], [/^stop: (?:\d+ )?cards? not read/, "next.stop_misread"],
    [/^stop: put aside (\d+) cards?: ([^;]*);/, "next.stop_aside"],
    [/^stop: shoe not connected/, "next.stop_shoe"], [/^stop: shoe connected again/, "next.stop_shoe_back"], [/^stop: /, "next.stop"]
  ];
  function nextText(next) {
    for (var i = 0; i < NEXT.length; i++) {
      var m = NEXT[i][0].exec(next || "");
      if (m) return t(NEXT[i][1], m[1], m[2]);
    }
    return next || t("next.wait");
  }

  // alarmText is what the dealer is told about an alarm: plain words and
  // what to do, never the engine's wording (the supervisor sees that);
  // of the cards set aside, which ones (the message lists them).
  function alarmText(code, message) {
    code = (code || "").replace(/^shoe\./, "");
    var text = t("alarm.other");
    if (has("alarm." + code)) text = t("alarm." + code);
    else if (code.indexOf("shuffler.") === 0) text = t("alarm.shuffler");
    var cards = code === "card_set_aside" && /set aside \(([2-9TJQKA][shdc](?: [2-9TJQKA][shdc])*)\)/.exec(message || "");
    return cards ? text + ": " + cards[1] : text;
  }

  function lightEl() {
    var d = el("div", "light");
    d.id = "light";
    d.appendChild(el("span", "lamp r"));
    d.appendChild(el("span", "lamp y"));
    d.appendChild(el("span", "lamp g"));
    return d;
  }

  // instructionClass colours the instruction line by what it asks.
  function instructionClass(next) {
    if (/^stop/i.test(next)) return "stop";
    if (/shoe/i.test(next)) return "shoe";
    if (/^wait/i.test(next) || next === "") return "wait";
    return "";
  }

  // Countdown: the remaining time is taken from the server's own clock
  // (deadline minus the snapshot's time) and counted down locally, so a
  // browser whose clock is off still shows the right number.
  function Countdown(onTick) {
    this.until = null;
    this.onTick = onTick;
    var self = this;
    setInterval(function () { self.tick(); }, 200);
  }
  // Betting counts to the betting deadline; during play the round's own
  // timer (a decision, the insurance offer) counts down. A paused table
  // shows nothing: its timers are stopped.
  // The label says what the number counts down to.
  Countdown.prototype.set = function (st, evTime) {
    var tm = st.timer, deadline = null;
    this.label = "";
    if (st.paused) {
      deadline = null;
    } else if ((st.phase === "betting" || st.phase === "last_call") && st.deadline) {
      deadline = st.deadline;
      this.label = t("countdown.bets");
    } else if (tm && (tm.name === "decision" || tm.name === "insurance") && tm.deadline) {
      deadline = tm.deadline;
      var seat = /seat (\d+)/.exec((st.round || {}).next || "");
      this.label = tm.name === "insurance" ? t("countdown.insurance") : t("countdown.decision", seat ? seat[1] : "");
    }
    if (deadline) {
      var left = Date.parse(deadline) - Date.parse(evTime);
      this.until = performance.now() + Math.max(0, left);
    } else {
      this.until = null;
    }
    this.tick();
  };
  Countdown.prototype.tick = function () {
    if (this.until === null) { this.onTick(null, ""); return; }
    this.onTick(Math.max(0, Math.ceil((this.until - performance.now()) / 1000)), this.label);
  };

  // connect opens the event stream: onState gets every snapshot with the
  // envelope's time, onEvent every other event; onLink(true/false) tells
  // whether the page is live. EventSource reconnects by itself.
  function connect(onState, onEvent, onLink) {
    var es = new EventSource("/events");
    es.addEventListener("open", function () { onLink(true); });
    es.addEventListener("error", function () { onLink(false); });
    es.addEventListener("state", function (m) {
      var ev = JSON.parse(m.data);
      onLink(true);
      onState(ev.data, ev.time, ev);
    });
    es.addEventListener("event", function (m) {
      if (onEvent) onEvent(JSON.parse(m.data));
    });
    return es;
  }

  // money writes minor units (cents) in the table's currency, the
  // language's way (1.234,50 € in Italian, €1,234.50 in English). The
  // amount is exact: the cents are split off as integers.
  var fmt = null;
  try {
    fmt = new Intl.NumberFormat(LANG, { style: "currency", currency: CURRENCY, minimumFractionDigits: 2, maximumFractionDigits: 2 });
  } catch (e) { fmt = null; }
  function money(cents) {
    var neg = cents < 0;
    var v = Math.abs(cents);
    if (fmt) return (neg ? "-" : "") + fmt.format(Math.floor(v / 100) + (v % 100) / 100);
    return (neg ? "-" : "") + Math.floor(v / 100) + "." + String(v % 100).padStart(2, "0") + " " + CURRENCY;
  }
  function signed(cents) {
    return (cents > 0 ? "+" : "") + money(cents);
  }

  function timeOf(iso) {
    if (!iso) return "";
    var d = new Date(iso);
    return d.toISOString().substring(11, 19);
  }

  return {
    t: t, has: has, lang: LANG, applyI18n: applyI18n, nextText: nextText, alarmText: alarmText,
    el: el, cardEl: cardEl, cardsEl: cardsEl, total: total, totalEl: totalEl,
    lightOf: lightOf, lightEl: lightEl, phaseText: phaseText, instructionClass: instructionClass,
    Countdown: Countdown, connect: connect, money: money, signed: signed, timeOf: timeOf
  };
})();
