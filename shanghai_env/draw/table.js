// The table's drawing, shared by the HTML replay (replay.js) and the browser game
// (shanghai_env/agents/web). tableScene() lays the table out exactly as shanghai_env/draw/scene.py
// does; keep them in step (tests/test_draw.py compares them in a browser).
"use strict";

const WIDTH = 1000, CARD_W = 34, CARD_H = 48, CARD_STEP = 37, TOP = 134, PANEL_H = 156, PANEL_SHORT = 92;
const RED = "#c0172b", BLACK = "#1b1b1b", JOKER_INK = "#7a2fa8";
const FELT = "#23643f", PANEL = "#2e7a4e", PANEL_ACT = "#3f9663", INK = "#f4f1e8", DIM = "#cfe3d2";
const GOLD = "#f2c14e";
const SUIT_WORDS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const FONT = "DejaVu Sans, Verdana, Arial, sans-serif";

function height(players) { return TOP + PANEL_H * players + 8; }
// A player with no melds gets a short panel, without the empty band melds would fill.
function panelTops(state) {
  const tops = [];
  let y = TOP;
  for (const melds of state.melds) { tops.push(y); y += melds.length ? PANEL_H : PANEL_SHORT; }
  return tops;
}
function drawnHeight(state) {
  const n = state.melds.length;
  return panelTops(state)[n - 1] + (state.melds[n - 1].length ? PANEL_H : PANEL_SHORT) + 8;
}
function ink(suit) { return suit === "D" || suit === "H" ? RED : BLACK; }
function rankText(rank) { return rank === "T" ? "10" : rank; }
function signed(v) { return (v >= 0 ? "+" : "") + v; }

function card(out, x, y, text) {
  if (text.startsWith("JK")) {
    out.push(["group", "card joker"]);
    out.push(["rect", x, y, CARD_W, CARD_H, 4, "#fffdf6", JOKER_INK, 0]);
    out.push(["text", x + 4, y + 14, 12, "JK", JOKER_INK, "start", 1]);
    if (text.startsWith("JK=")) {
      const place = text.slice(3), suit = place[1];
      out.push(["text", x + 17, y + 28, 9, "as", JOKER_INK, "middle", 0]);
      const label = rankText(place[0]);  // a high ace is an ace: its place in the run says it is high
      out.push(["text", x + 14, y + 42, 11, label, ink(suit), "middle", 1]);
      out.push(["suit", x + 26, y + 38, 9, suit, ink(suit)]);
    } else {
      out.push(["text", x + 17, y + 38, 9, "joker", JOKER_INK, "middle", 0]);
    }
    out.push(["end"]);
    return;
  }
  const rank = text[0], suit = text[1], color = ink(suit);
  out.push(["group", "card"]);
  out.push(["rect", x, y, CARD_W, CARD_H, 4, "#fffdf6", "#55585c", 0]);
  out.push(["text", x + 4, y + 15, 13, rankText(rank), color, "start", 1]);
  out.push(["suit", x + 21, y + 33, 16, suit, color]);
  out.push(["end"]);
}

function cardBack(out, x, y) {
  out.push(["group", "card back"]);
  out.push(["rect", x, y, CARD_W, CARD_H, 4, "#2f5d8a", "#16324d", 0]);
  out.push(["rect", x + 4, y + 4, CARD_W - 8, CARD_H - 8, 3, "#3b73a8", "#9cc0e4", 0]);
  out.push(["end"]);
}

function spread(count, room) {
  if (count <= 1) return CARD_STEP;
  return Math.max(8, Math.min(CARD_STEP, Math.floor((room - CARD_W) / (count - 1))));
}

function cardWords(text) {
  if (text === "JK") return "joker";
  return rankText(text[0]) + SUIT_WORDS[text[1]];
}

function player(p) { return "player " + p; }

function status(state, header) {
  const phase = state.phase;
  const up = state.up ? cardWords(state.up) : "nothing";
  const last = state.deal + 1 === header.contracts.length;
  if (phase === "END" || phase === "GAME_OVER") {
    const result = state.result;
    if (result === null) return "Game over";
    let how = result.out === null ? "nobody went out" : player(result.out) + " went out";
    how += result.blind ? " blind" : "";
    if (last) {
      const low = Math.min(...state.scores);
      const winners = [];
      state.scores.forEach((s, p) => { if (s === low) winners.push(player(p)); });
      return "Game over: " + how + " \u00b7 winner" + (winners.length > 1 ? "s" : "") + " " + winners.join(" and ");
    }
    return "Deal " + (state.deal + 1) + " over: " + how;
  }
  const act = player(state.act);
  if (phase === "DRAW") return act + " to draw: take the " + up + " or draw from the stock";
  if (phase === "BUY") {
    const then = state.offer.slice(1).map(player);
    const more = then.length ? " (then " + then.join(", ") + ")" : "";
    return player(state.turn) + " declined the " + up + ": " + act + " may buy it" + more;
  }
  if (phase === "GOING_DOWN") return act + " is going down";
  return act + " to play: meld, lay off, swap, then discard";
}

function tableScene(state, header, viewer) {
  const n = header.players, names = header.names;
  const out = [["rect", 0, 0, WIDTH, height(n), 0, FELT, "", 0]];
  const contract = String(state.contract);
  const title = "Deal " + (state.deal + 1) + "/" + header.contracts.length + " \u00b7 contract " + contract +
    ": " + header.describe[contract] + " \u00b7 dealer " + player(state.dealer);
  out.push(["text", 16, 26, 17, title, INK, "start", 1]);
  out.push(["text", 16, 50, 14, status(state, header), GOLD, "start", 0]);
  const view = viewer === null ? "all hands" : player(viewer) + "'s view";
  out.push(["text", WIDTH - 16, 26, 13, view, DIM, "end", 0]);

  out.push(["group", "stock"]);
  if (state.stock) cardBack(out, 16, 66);
  else out.push(["rect", 16, 66, CARD_W, CARD_H, 4, FELT, DIM, 1]);
  out.push(["end"]);
  out.push(["text", 58, 84, 13, "stock " + state.stock, INK, "start", 0]);
  const rebuilds = state.rebuilds === null ? "no limit on rebuilds" : "rebuilds left " + state.rebuilds;
  out.push(["text", 58, 102, 11, rebuilds, DIM, "start", 0]);
  out.push(["group", "upcard"]);
  if (state.up) card(out, 196, 66, state.up);
  else out.push(["rect", 196, 66, CARD_W, CARD_H, 4, FELT, DIM, 1]);
  out.push(["end"]);
  out.push(["text", 238, 84, 13, "discard pile " + state.pile, INK, "start", 0]);
  if (state.upFrom !== null && state.up) {
    out.push(["text", 238, 102, 11, "top from " + player(state.upFrom), DIM, "start", 0]);
  }
  if (state.phase === "BUY" && state.up) {
    out.push(["rect", 192, 62, CARD_W + 8, CARD_H + 8, 6, "none", GOLD, 0]);
    out.push(["text", 238, 120, 12, "on offer to " + player(state.act), GOLD, "start", 1]);
  }

  const specs = header.melds[contract];
  const result = state.result;
  const tops = panelTops(state);
  for (let p = 0; p < n; p++) {
    const y = tops[p];
    const melds = state.melds[p];
    const acting = p === state.act;
    out.push(["group", "player p" + p]);
    out.push(["rect", 8, y, WIDTH - 16, (melds.length ? PANEL_H : PANEL_SHORT) - 8, 8,
      acting ? PANEL_ACT : PANEL, acting ? GOLD : "", 0]);
    const mark = acting ? "\u25b6 " : "";
    const named = names[p] && names[p] !== "player_" + p ? " \u00b7 " + names[p] : "";
    out.push(["text", 20, y + 20, 14, mark + player(p) + named, INK, "start", 1]);
    const hand = state.hands[p] ? state.hands[p].split(" ") : [];
    const facts = ["score " + state.scores[p]];
    if (result !== null) facts.push("this deal " + signed(result.scores[p]));
    facts.push("buys " + state.buys[p], hand.length + " card" + (hand.length !== 1 ? "s" : ""));
    facts.push(state.down[p] ? "down" : "not down");
    out.push(["text", WIDTH - 20, y + 20, 13, facts.join(" \u00b7 "), INK, "end", 0]);
    const faceUp = viewer === null || viewer === p || state.phase === "END" || state.phase === "GAME_OVER";
    const step = spread(hand.length, WIDTH - 40);
    out.push(["group", "hand"]);
    hand.forEach((text, i) => {
      if (faceUp) card(out, 20 + i * step, y + 28, text);
      else cardBack(out, 20 + i * step, y + 28);
    });
    out.push(["end"]);
    if (!melds.length) {
      out.push(["end"]);
      continue;
    }
    const laid = melds.map((m) => (m ? m.split(" ") : []));
    const total = laid.reduce((a, m) => a + Math.max(m.length, 1), 0);
    const room = WIDTH - 40 - 16 * (laid.length - 1);
    const extra = total - laid.length;
    const mstep = extra <= 0 ? CARD_STEP :
      Math.max(8, Math.min(CARD_STEP, Math.floor((room - CARD_W * laid.length) / extra)));
    let x = 20;
    laid.forEach((cards, j) => {
      out.push(["text", x, y + 94, 11, specs[j], DIM, "start", 0]);
      out.push(["group", "meld"]);
      if (!cards.length) out.push(["rect", x, y + 98, CARD_W, CARD_H, 4, "none", DIM, 1]);
      cards.forEach((text, i) => card(out, x + i * mstep, y + 98, text));
      out.push(["end"]);
      x += mstep * (Math.max(cards.length, 1) - 1) + CARD_W + 16;
    });
    out.push(["end"]);
  }
  return out;
}

function escapeText(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function sceneSvg(scene, width, h) {
  const parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + width + '" height="' + h +
    '" viewBox="0 0 ' + width + " " + h + '" font-family="' + FONT + '">'];
  for (const s of scene) {
    const kind = s[0];
    if (kind === "group") parts.push('<g class="' + s[1] + '">');
    else if (kind === "end") parts.push("</g>");
    else if (kind === "rect") {
      const [, x, y, w, hh, r, fill, stroke, dash] = s;
      let attrs = 'x="' + x + '" y="' + y + '" width="' + w + '" height="' + hh + '" rx="' + r + '" fill="' + fill + '"';
      if (stroke) attrs += ' stroke="' + stroke + '" stroke-width="' + (fill === "none" ? 2 : 1) + '"';
      if (dash) attrs += ' stroke-dasharray="4 3"';
      parts.push("<rect " + attrs + "/>");
    } else if (kind === "text") {
      const [, x, y, size, text, fill, anchor, bold] = s;
      const weight = bold ? ' font-weight="bold"' : "";
      parts.push('<text x="' + x + '" y="' + y + '" font-size="' + size + '" fill="' + fill +
        '" text-anchor="' + anchor + '"' + weight + ">" + escapeText(text) + "</text>");
    } else if (kind === "suit") {
      const [, cx, cy, size, suit, fill] = s;
      parts.push('<text x="' + cx + '" y="' + (cy + Math.floor(size / 3)) + '" font-size="' + size + '" fill="' +
        fill + '" text-anchor="middle">' + SUIT_WORDS[suit] + "</text>");
    }
  }
  parts.push("</svg>");
  return parts.join("");
}
