"""The browser game's page: one HTML document and its script (``/play.js``).

The table is drawn by ``/table.js``, the HTML replay's own drawing
(:func:`shanghai_env.draw.replay.table_script`), from the state the server sends: the person's
view of the table, laid out for the width the page gives it (see ``place()`` in the script).
The script makes the drawing clickable, offering only the moves the server lists as legal for
the person's seat: the upcard and the stock to draw, a card of the hand to pick (a second click
on it discards it), a meld to put the picked card in (going down, laying off, swapping for a
joker), and buttons for everything else (buy, pass, a joker's declared card, finishing, the
next deal). Every move is sent by its engine name with the state counter
the page saw; the server checks it.

Kept as Python strings (not files beside this module) so that the page ships in any install
without package data.
"""

from __future__ import annotations

# From a phone to a wide screen: the table takes its column's whole width (beside the scores and the
# story on a wide screen, the page's full width below 1100 px), laid out for that width: never
# scrolled sideways, its text never under 12 px (place() in the script). On a phone, everything
# that takes a tap is at least 44 px tall.
CSS = """
body { margin: 0; background: #153d27; color: #f4f1e8;
  font: 14px/1.4 "DejaVu Sans", Verdana, Arial, sans-serif; }
main { max-width: 1400px; margin: 0 auto; padding: 8px 10px; box-sizing: border-box; }
header { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: center; }
h1 { font-size: 18px; margin: 0; }
h2 { font-size: 13px; margin: 8px 0 4px; color: #cfe3d2; }
#info { color: #cfe3d2; flex: 1 1 20em; }
#info .who { white-space: nowrap; }
#info b { color: #f4f1e8; }
#buttons { display: flex; gap: 6px; margin-left: auto; }
button { background: #2e7a4e; color: #f4f1e8; border: 1px solid #5fae7e; border-radius: 4px;
  padding: 4px 10px; font: inherit; cursor: pointer; }
button:hover { background: #3f9663; }
button:disabled { opacity: 0.5; cursor: default; }
button.main { background: #b8860b; border-color: #f2c14e; font-weight: bold; }
#prompt { font-size: 16px; font-weight: bold; color: #f2c14e; min-height: 24px; margin: 6px 0 4px; }
#actions { display: flex; flex-wrap: wrap; gap: 6px; min-height: 30px; align-items: center; }
#actions .why { color: #cfe3d2; font-size: 13px; flex: 1 1 16em; }
#error { color: #ffb3b3; font-weight: bold; min-height: 20px; }
#layout { display: grid; gap: 4px 14px; align-items: start;
  grid-template-columns: minmax(0, 1fr) 300px; grid-template-rows: auto auto auto 1fr;
  grid-template-areas: "controls controls" "table scores" "table known" "table story"; }
#controls { grid-area: controls; min-width: 0; }
#table { grid-area: table; min-width: 0; }
#table svg { display: block; height: auto; margin: 0 auto; border-radius: 8px; }
#scores-box { grid-area: scores; min-width: 0; }
#known-box { grid-area: known; min-width: 0; }
#story { grid-area: story; min-width: 0; font-size: 13px; }
#scores-box, #known-box { font-size: 13px; }
#scores { overflow-x: auto; }
#log { height: 300px; overflow-y: auto; background: #10301e; border-radius: 6px; padding: 4px 6px; }
#log div { padding: 1px 0; }
#log .you { font-weight: bold; }
#log .deal { color: #f2c14e; }
#log .info { color: #9fc7ab; }
table.scores { border-collapse: collapse; width: 100%; }
table.scores th, table.scores td { padding: 1px 4px; text-align: right; border-bottom: 1px solid #2e7a4e;
  white-space: nowrap; }
table.scores th:first-child, table.scores td:first-child { text-align: left; }
table.scores tr.me { font-weight: bold; }
#links a { color: #f2c14e; margin-right: 12px; display: inline-block; margin-top: 4px; }
details { margin-top: 8px; color: #cfe3d2; }
#menu { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 4px; }
#menu button { font-size: 12px; padding: 2px 6px; }
g.pick { cursor: pointer; }
g.pick:hover rect { stroke: #f2c14e; stroke-width: 2; }
g.drawn > rect { stroke: #5cc8ff; stroke-width: 3; }
g.chosen { transform: translateY(-2px); }  /* no higher: the name above would be under it */
g.chosen > rect { stroke: #f2c14e; stroke-width: 2.5; fill: #fff1bf; }
g.target rect { stroke: #f2c14e; stroke-width: 3; }
g.target rect.hit, g.pick:hover rect.hit { stroke: none; }
/* narrower: the table takes the page's width; the latest of the story (what the others just
   did) beside the prompt, above the table; the scores and the cards seen below it */
@media (max-width: 1099px) {
  #layout { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); grid-template-rows: none;
    grid-template-areas: "controls story" "table table" "scores known"; }
  #story h2 { margin-top: 4px; }
  #log { height: auto; max-height: 5.8em; }
}
/* a phone: one column, buttons large enough for a finger */
@media (max-width: 599px) {
  main { padding: 6px 8px; }
  button, #menu button { min-height: 44px; }
  #menu button { padding: 2px 10px; }
  h1 { font-size: 17px; }
  #prompt { font-size: 15px; }
  #layout { grid-template-columns: minmax(0, 1fr);
    grid-template-areas: "controls" "story" "table" "scores" "known"; }
  #log { max-height: 4.3em; }
}
"""

PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Shanghai Rummy</title>
<style>{CSS}</style>
</head>
<body>
<main>
<header>
<h1>Shanghai Rummy</h1>
<span id="info"></span>
<span id="buttons">
<button id="newgame" title="start another game (this one stays where it is)">New game</button>
<button id="leave" title="stop playing this game">Leave</button>
</span>
</header>
<div id="layout">
<div id="controls">
<div id="prompt">Dealing…</div>
<div id="actions"></div>
<div id="error" role="alert"></div>
</div>
<div id="table"></div>
<section id="scores-box"><h2>Scores</h2><div id="scores"></div></section>
<section id="known-box"><h2>Seen going into hands</h2><div id="known"></div></section>
<section id="story"><h2>The game so far</h2><div id="log" aria-live="polite"></div>
<div id="links"></div></section>
</div>
<details id="all"><summary>All your legal moves</summary><div id="menu"></div></details>
</main>
<script src="/table.js"></script>
<script src="/play.js"></script>
</body>
</html>
"""

PLAY_SCRIPT = r"""// The browser game: shows the state the server sends and sends the person's moves back.
// tableScene(), sceneSvg(), drawnHeight(), cardWords() and NARROWEST come from /table.js.
"use strict";
(function () {
  const el = (id) => document.getElementById(id);
  let game = null, seat = null, data = null, chosen = null, busy = false, lastLog = -1;
  let armed = null;  // a button asking "really?" (leave, a new game while this one is on)

  async function call(method, url, body) {
    const options = { method: method, headers: {} };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await fetch(url, options);
    let payload;
    try {
      payload = await response.json();
    } catch (e) {
      payload = { error: "no answer (" + response.status + ")" };
    }
    if (!response.ok) throw new Error(payload.error || "error " + response.status);
    return payload;
  }

  function error(text) { el("error").textContent = text; }

  function setBusy(on) {
    busy = on;
    document.body.dataset.busy = on ? "1" : "0";
    for (const b of document.querySelectorAll("#actions button, #menu button")) b.disabled = on;
  }

  async function newGame() {
    setBusy(true);
    error("");
    try {
      const d = await call("POST", "/api/new", {});
      game = d.game;
      seat = d.seat;
      history.replaceState(null, "", "#game=" + d.game + "&seat=" + d.seat);
      el("log").textContent = "";
      lastLog = -1;
      show(d);
    } catch (e) {
      error(e.message);
    } finally {
      setBusy(false);
    }
  }

  async function resume() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.get("game")) {
      setBusy(true);
      try {
        const url = "/api/game/" + encodeURIComponent(params.get("game")) + "?seat=" +
          encodeURIComponent(params.get("seat") || "");
        const d = await call("GET", url);
        game = d.game;
        seat = d.seat;
        show(d);
        return;
      } catch (e) {
        /* that game is gone (the server restarted, or it was closed): start a new one */
      } finally {
        setBusy(false);
      }
    }
    await newGame();
  }

  async function post(action, body) {
    if (busy || !data) return;
    setBusy(true);
    error("");
    try {
      show(await call("POST", "/api/game/" + game + "/" + action, body));
    } catch (e) {
      error(e.message);
    } finally {
      setBusy(false);
    }
  }

  function send(name) { return post("move", { seat: seat, state: data.state, move: name, since: lastLog }); }

  // --- showing a state ---------------------------------------------------------------------------

  function show(d) {
    data = d;
    chosen = null;
    armed = null;
    const log = el("log");
    for (const line of d.log) {
      if (line.n <= lastLog) continue;
      const div = document.createElement("div");
      div.textContent = line.text;
      div.className = line.who === seat ? "you" : line.kind;
      log.appendChild(div);
      lastLog = line.n;
    }
    log.scrollTop = log.scrollHeight;
    el("prompt").textContent = d.prompt;
    drawInfo();
    el("newgame").textContent = "New game";
    el("leave").textContent = "Leave";
    el("leave").disabled = d.phase === "GAME_OVER" || d.left;
    drawTable();
    drawActions();
    drawScores();
    drawKnown();
    drawLinks();
    document.body.dataset.state = String(d.state);
    document.body.dataset.phase = d.phase;
  }

  // Who plays, with every total: the scores stay in view at the top on any screen.
  function drawInfo() {
    const info = el("info");
    info.textContent = "";
    data.header.names.forEach((n, p) => {
      if (p) info.append(" \u00b7 ");
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = "player " + p + (p === seat ? " (you)" : " " + n) + ": ";
      const total = document.createElement("b");
      total.textContent = String(data.scores[p]);
      total.title = "total score";
      who.appendChild(total);
      info.appendChild(who);
    });
  }

  // Why a card offers no more than a discard: the server says so for the whole hand (just gone
  // down, or the contract out of reach); a player already down may hold a card that fits nowhere.
  function onlyDiscard(card) {
    const moves = withCard(card);
    if (!moves.length || moves.some((m) => m.kind !== "discard")) return "";
    if (data.hint) return data.hint;
    if (data.table.down[seat]) return cardWords(card) + " fits no meld on the table.";
    return "";
  }

  function handCards() {
    const text = data.table.hands[seat];
    return text ? text.split(" ") : [];
  }

  function withCard(card) { return data.moves.filter((m) => m.card === card); }

  function tip(g, title) {
    const t = document.createElementNS("http://www.w3.org/2000/svg", "title");
    t.textContent = title;
    g.appendChild(t);
  }

  function clickable(g, title, onClick) {
    g.classList.add("pick");
    tip(g, title);
    g.addEventListener("click", (e) => { e.stopPropagation(); if (!busy) onClick(); });
  }

  function find(kind) { return data.moves.find((m) => m.kind === kind); }

  function drawTable() {
    const state = data.table, header = data.header;
    const box = el("table");
    let room = 0;
    for (let tries = 0; tries < 2 && box.clientWidth !== room; tries++) {
      room = box.clientWidth;  // again if the drawing's height brought a scrollbar, or took one away
      const size = place(room);
      const options = { width: size.width, status: data.status || undefined };
      const h = drawnHeight(state, header, seat, options);
      box.innerHTML = sceneSvg(tableScene(state, header, seat, options), size.width, h);
      box.querySelector("svg").style.width = size.width * size.zoom + "px";
    }
    const svg = box.querySelector("svg");
    const stock = svg.querySelector("g.stock"), up = svg.querySelector("g.upcard");
    const draw = find("draw"), take = find("take"), buy = find("buy");
    if (draw) clickable(stock, draw.words, () => send(draw.name));
    if (take) clickable(up, take.words, () => send(take.name));
    if (buy) clickable(up, buy.words, () => send(buy.name));
    const hand = svg.querySelector("g.player.p" + seat + " > g.hand");
    const cards = handCards();
    if (hand && state.phase !== "END" && state.phase !== "GAME_OVER") {
      const drawn = data.drawn.slice();  // each card drawn marks one card of the hand
      Array.from(hand.children).forEach((g, i) => {
        const card = cards[i];
        g.dataset.card = card;
        g.dataset.index = String(i);
        const fresh = drawn.indexOf(card);
        if (fresh >= 0) {
          drawn.splice(fresh, 1);
          g.classList.add("drawn");
        }
        if (chosen && chosen.index === i) g.classList.add("chosen");
        const why = onlyDiscard(card);
        const title = "pick " + cardWords(card) + (fresh >= 0 ? " (just drawn)" : "") +
          (why ? ": discard only. " + why : "");
        if (withCard(card).length) clickable(g, title, () => pick(card, i));
        else if (fresh >= 0) tip(g, cardWords(card) + ": just drawn");
      });
    }
    for (let p = 0; p < header.players; p++) {
      svg.querySelectorAll("g.player.p" + p + " > g.meld").forEach((g, j) => {
        g.dataset.meld = p + "." + j;
        if (!chosen) return;
        const fits = withCard(chosen.card).filter((m) => m.owner === p && m.meld === j);
        if (!fits.length) return;
        g.classList.add("target");
        // one transparent rectangle under the meld's cards, so that the gaps between them click too
        const box = g.getBBox();
        const hit = document.createElementNS("http://www.w3.org/2000/svg", "rect");
        for (const [k, v] of [["x", box.x - 3], ["y", box.y - 3], ["width", box.width + 6],
          ["height", box.height + 6], ["fill", "transparent"], ["class", "hit"]]) hit.setAttribute(k, v);
        g.insertBefore(hit, g.firstChild);
        clickable(g, fits.length === 1 ? fits[0].words : "choose how", () => {
          if (fits.length === 1) send(fits[0].name);
          else drawActions(fits);
        });
      });
    }
  }

  function pick(card, index) {
    if (chosen && chosen.index === index) {
      const discard = withCard(card).find((m) => m.kind === "discard");
      if (discard) { send(discard.name); return; }
      chosen = null;
    } else {
      chosen = { card: card, index: index };
    }
    drawTable();
    drawActions();
  }

  function button(box, text, onClick, name, main) {
    const b = document.createElement("button");
    b.textContent = text;
    if (name) b.dataset.move = name;
    if (main) b.className = "main";
    b.disabled = busy;
    b.addEventListener("click", onClick);
    box.appendChild(b);
    return b;
  }

  function drawActions(only) {
    const box = el("actions");
    box.textContent = "";
    if (data.next) button(box, "Deal the next hand", () => send("next"), "next", true);
    let offered = only || data.moves.filter((m) => m.card === null);
    if (!only && chosen) offered = offered.concat(withCard(chosen.card));
    for (const m of offered) {
      const words = m.words[0].toUpperCase() + m.words.slice(1);
      button(box, words, () => send(m.name), m.name, m.kind !== "pass");
    }
    const why = !only && chosen ? onlyDiscard(chosen.card) : "";
    if (why && !data.prompt.includes(why)) {  // said beside the button unless the prompt says it
      const span = document.createElement("span");
      span.className = "why";
      span.textContent = why;
      box.appendChild(span);
    }
    if (only) button(box, "Cancel", () => drawActions());
    const menu = el("menu");
    menu.textContent = "";
    for (const m of data.moves) button(menu, m.words, () => send(m.name), null, false).title = m.name;
    el("all").style.display = data.moves.length ? "" : "none";
  }

  function drawScores() {
    const header = data.header, results = data.results;
    const rows = ["<tr><th>player</th>" + results.map((r) => "<th>deal " + (r.deal + 1) + "</th>").join("") +
      "<th>total</th></tr>"];
    for (let p = 0; p < header.players; p++) {
      const mine = p === seat ? ' class="me"' : "";
      const name = "player " + p + (p === seat ? " (you)" : "");
      const deals = results.map((r) => "<td>" + r.scores[p] + (r.out === p ? " \u2605" : "") + "</td>");
      const total = "<td>" + data.scores[p] + "</td>";
      rows.push("<tr" + mine + "><td>" + name + "</td>" + deals.join("") + total + "</tr>");
    }
    el("scores").innerHTML = '<table class="scores">' + rows.join("") + "</table>";
  }

  function drawKnown() {
    const lines = [];
    data.known.forEach((cards, p) => {
      const who = "player " + p + (p === seat ? " (you)" : "");
      if (cards.length) lines.push(who + ": " + cards.map(cardWords).join(" "));
    });
    el("known").textContent = lines.length ? lines.join("\n") : "nothing";
    el("known").style.whiteSpace = "pre-line";
  }

  function drawLinks() {
    const box = el("links");
    box.textContent = "";
    if (data.phase !== "GAME_OVER" && !data.left) return;
    const query = "?seat=" + seat;
    const links = [["record", "Download the game record"], ["replay", "Open the replay"]];
    for (const [what, text] of links) {
      const a = document.createElement("a");
      a.href = "/api/game/" + game + "/" + what + query;
      a.textContent = text;
      if (what === "replay") a.target = "_blank";
      a.id = what + "-link";
      box.appendChild(a);
    }
  }

  // The table fills the room it has: laid out LAYOUT units wide and drawn larger (up to MOST_ZOOM
  // times: cards 61 px wide) where there is more room, laid out narrower (text wrapped, a player's
  // score and buys below their name) where there is less, and never drawn smaller than one unit to
  // a pixel, so that no text in it is under 12 px and nothing in it is off the side of a phone.
  const LAYOUT = 600, MOST_ZOOM = 1.8;
  function place(room) {
    const zoom = Math.min(MOST_ZOOM, Math.max(1, room / LAYOUT));
    return { width: Math.max(NARROWEST, Math.floor(room / zoom)), zoom: zoom };
  }

  let resized = null;
  function redraw() {
    clearTimeout(resized);
    resized = setTimeout(() => { if (data) drawTable(); }, 100);
  }

  function confirmed(b) {
    if (armed === b) return true;
    armed = b;
    b.textContent = "Really " + b.textContent.toLowerCase() + "?";
    return false;
  }

  el("newgame").addEventListener("click", () => {
    const on = data && data.phase !== "GAME_OVER" && !data.left;
    if (!on || confirmed(el("newgame"))) newGame();
  });
  el("leave").addEventListener("click", () => {
    if (confirmed(el("leave"))) post("leave", { seat: seat, state: data.state, since: lastLog });
  });
  window.addEventListener("resize", redraw);
  resume();
})();
"""
