// The table's drawing, shared by the HTML replay (replay.js) and the browser game
// (shanghai_env/agents/web). tableScene() lays the table out exactly as shanghai_env/draw/scene.py
// does, for the width it is given, wrapping by the same estimate of text widths; keep them in step
// (tests/test_draw.py and tests/test_web_browser.py compare them in a browser).
"use strict";

const WIDTH = 1000, NARROWEST = 280, SMALLEST = 12;
const CARD_W = 34, CARD_H = 48, CARD_STEP = 37, MELD_STEP = 16, TOP = 134, PANEL_H = 156, MELD_ROW = 70;
const RED = "#c0172b", BLACK = "#1b1b1b", JOKER_INK = "#7a2fa8";
const FELT = "#23643f", PANEL = "#2e7a4e", PANEL_ACT = "#3f9663", INK = "#f4f1e8", DIM = "#cfe3d2";
const GOLD = "#f2c14e";
const SUIT_WORDS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const FONT = "DejaVu Sans, Verdana, Arial, sans-serif";

// A generous estimate of text widths, as scene.py makes it (in thousandths of the size, bold).
const NARROW_CHARS = "ijlI.,:;'!|\u00b7", MID_CHARS = " ()-/frtJ[]", WIDE_CHARS = "mwMW";
const SYMBOL_CHARS = "\u25b6\u2660\u2663\u2665\u2666+=";
function charWidth(ch) {
  if (NARROW_CHARS.includes(ch)) return 400;
  if (MID_CHARS.includes(ch)) return 500;
  if (WIDE_CHARS.includes(ch)) return 1100;
  if (SYMBOL_CHARS.includes(ch)) return 900;
  if (ch >= "A" && ch <= "Z") return 850;
  return 720;
}
function widthSum(text) { let total = 0; for (const ch of text) total += charWidth(ch); return total; }
function textWidth(text, size, bold) { return widthSum(text) * size * (bold ? 1000 : 900) / 1000000; }
function fits(text, size, bold, room) { return widthSum(text) * size * (bold ? 1000 : 900) <= room * 1000000; }
function roomOf(text, size, bold) { return Math.floor(textWidth(text, size || SMALLEST, bold || 0)) + 1; }
function wrap(text, size, bold, room, sep) {
  sep = sep || " ";
  const lines = [];
  let line = "";
  for (const word of text.split(sep)) {
    const longer = line ? line + sep + word : word;
    if (line && !fits(longer, size, bold, room)) { lines.push(line); line = word; }
    else line = longer;
  }
  lines.push(line);
  return lines;
}

function height(players) { return TOP + PANEL_H * players + 8; }
function ink(suit) { return suit === "D" || suit === "H" ? RED : BLACK; }
function rankText(rank) { return rank === "T" ? "10" : rank; }
function signed(v) { return (v >= 0 ? "+" : "") + v; }

function card(out, x, y, text) {
  if (text.startsWith("JK")) {
    out.push(["group", "card joker"]);
    out.push(["rect", x, y, CARD_W, CARD_H, 4, "#fffdf6", JOKER_INK, 0]);
    out.push(["text", x + 4, y + 13, 12, "JK", JOKER_INK, "start", 1]);
    if (text.startsWith("JK=")) {
      const place = text.slice(3), suit = place[1];
      out.push(["text", x + 17, y + 28, 12, "as", JOKER_INK, "middle", 0]);
      const label = rankText(place[0]);  // a high ace is an ace: its place in the run says it is high
      out.push(["text", x + 12, y + 44, 12, label, ink(suit), "middle", 1]);
      out.push(["suit", x + 27, y + 40, 12, suit, ink(suit)]);
    } else {
      out.push(["text", x + 17, y + 38, 12, "joker", JOKER_INK, "middle", 0]);
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

// The melds' rows, each [the melds in it, the distance between their cards].
function meldRows(laid, labels, room) {
  function step(melds) {
    let free = room - 16 * (melds.length - 1) - CARD_W * melds.length;
    for (const j of melds) free -= Math.max(0, roomOf(labels[j]) - CARD_W - 8 * Math.max(laid[j].length - 1, 0));
    const extra = melds.reduce((a, j) => a + Math.max(laid[j].length, 1) - 1, 0);
    return extra <= 0 ? CARD_STEP : Math.max(8, Math.min(CARD_STEP, Math.floor(free / extra)));
  }
  const rows = [];
  laid.forEach((_, j) => {
    if (rows.length && step(rows[rows.length - 1].concat([j])) >= MELD_STEP) rows[rows.length - 1].push(j);
    else rows.push([j]);
  });
  return rows.map((melds) => [melds, step(melds)]);
}

// The table laid out for options.width units (WIDTH unless given); options.status: the words under
// the title where the drawing's own would mislead. Returns {shapes, height}.
function layout(state, header, viewer, options) {
  const width = options && options.width !== undefined ? options.width : WIDTH;
  const given = options && options.status !== undefined ? options.status : null;
  if (!Number.isInteger(width) || width < NARROWEST) {
    throw new Error("width must be a whole number of units, at least " + NARROWEST + ", got " + width);
  }
  const n = header.players, names = header.names;
  const out = [["rect", 0, 0, width, 0, 0, FELT, "", 0]];
  const contract = String(state.contract);
  const title = "Deal " + (state.deal + 1) + "/" + header.contracts.length + " \u00b7 contract " + contract +
    ": " + header.describe[contract] + " \u00b7 dealer " + player(state.dealer);
  const view = viewer === null || viewer === undefined ? "all hands" : player(viewer) + "'s view";
  const room = width - 32;
  let y = 26, shown;
  if (fits(title, 17, 1, room - 24 - roomOf(view, 13))) {
    out.push(["text", 16, y, 17, title, INK, "start", 1]);
    shown = ["text", width - 16, y, 13, view, DIM, "end", 0];
  } else {
    wrap(title, 17, 1, room).forEach((line, k) => {
      if (k) y += 22;
      out.push(["text", 16, y, 17, line, INK, "start", 1]);
    });
    y += 20;
    shown = ["text", 16, y, 13, view, DIM, "start", 0];
  }
  y += 24;
  const said = given !== null ? given : status(state, header);
  wrap(said, 14, 0, room).forEach((line, k) => {
    if (k) y += 19;
    out.push(["text", 16, y, 14, line, GOLD, "start", 0]);
  });
  out.push(shown);

  const row = y + 16;
  out.push(["group", "stock"]);
  if (state.stock) cardBack(out, 16, row);
  else out.push(["rect", 16, row, CARD_W, CARD_H, 4, FELT, DIM, 1]);
  out.push(["end"]);
  const rebuilds = state.rebuilds === null ? "no limit on rebuilds" : "rebuilds left " + state.rebuilds;
  out.push(["text", 58, row + 18, 13, "stock " + state.stock, INK, "start", 0]);
  out.push(["text", 58, row + 36, 12, rebuilds, DIM, "start", 0]);
  const widest = state.rebuilds === null ? rebuilds : "rebuilds left 00";
  const words = Math.max(textWidth("stock 000", 13, 0), textWidth(widest, 12, 0));
  const upX = Math.max(width >= WIDTH ? 196 : 0, 58 + Math.floor(words) + 20);
  out.push(["group", "upcard"]);
  if (state.up) card(out, upX, row, state.up);
  else out.push(["rect", upX, row, CARD_W, CARD_H, 4, FELT, DIM, 1]);
  out.push(["end"]);
  const beside = [["discard pile " + state.pile, 13, INK, 0]];
  if (state.upFrom !== null && state.up) beside.push(["top from " + player(state.upFrom), 12, DIM, 0]);
  if (state.phase === "BUY" && state.up) {
    out.push(["rect", upX - 4, row - 4, CARD_W + 8, CARD_H + 8, 6, "none", GOLD, 0]);
    beside.push(["on offer to " + player(state.act), 12, GOLD, 1]);
  }
  let bottom = row + 68, below = row + CARD_H + 22;
  beside.forEach(([text, size, fill, bold], k) => {
    if (fits(text, size, bold, width - 16 - (upX + 42))) {
      out.push(["text", upX + 42, row + 18 * (k + 1), size, text, fill, "start", bold]);
    } else {
      out.push(["text", 16, below, size, text, fill, "start", bold]);
      bottom = below + 14;
      below += 18;
    }
  });

  const specs = header.melds[contract];
  const result = state.result;
  y = bottom;
  for (let p = 0; p < n; p++) {
    const melds = state.melds[p];
    const acting = p === state.act;
    out.push(["group", "player p" + p]);
    const panel = out.length;
    out.push(["rect"]);  // the panel, once its height is known
    const mark = acting ? "\u25b6 " : "";
    const named = names[p] && names[p] !== "player_" + p ? " \u00b7 " + names[p] : "";
    const name = mark + player(p) + named;
    out.push(["text", 20, y + 20, 14, name, INK, "start", 1]);
    const hand = state.hands[p] ? state.hands[p].split(" ") : [];
    const facts = ["score " + state.scores[p]];
    if (result !== null) facts.push("this deal " + signed(result.scores[p]));
    facts.push("buys " + state.buys[p], hand.length + " card" + (hand.length !== 1 ? "s" : ""));
    facts.push(state.down[p] ? "down" : "not down");
    const line = facts.join(" \u00b7 ");
    let top = y + 28;
    if (fits(line, 13, 0, width - 40 - 24 - roomOf(name, 14, 1))) {
      out.push(["text", width - 20, y + 20, 13, line, INK, "end", 0]);
    } else {
      for (const part of wrap(line, 13, 0, width - 40, " \u00b7 ")) {
        out.push(["text", 20, top + 10, 13, part, INK, "start", 0]);
        top += 18;
      }
    }
    const faceUp = viewer === null || viewer === undefined || viewer === p || state.phase === "END" ||
      state.phase === "GAME_OVER";
    const step = spread(hand.length, width - 40);
    out.push(["group", "hand"]);
    hand.forEach((text, i) => {
      if (faceUp) card(out, 20 + i * step, top, text);
      else cardBack(out, 20 + i * step, top);
    });
    out.push(["end"]);
    let end = top + CARD_H + 16;
    if (melds.length) {
      const laid = melds.map((m) => (m ? m.split(" ") : []));
      meldRows(laid, specs, width - 40).forEach(([rowMelds, mstep], r) => {
        let x = 20;
        for (const j of rowMelds) {
          const cards = laid[j];
          out.push(["text", x, top + 66 + MELD_ROW * r, 12, specs[j], DIM, "start", 0]);
          out.push(["group", "meld"]);
          if (!cards.length) out.push(["rect", x, top + 70 + MELD_ROW * r, CARD_W, CARD_H, 4, "none", DIM, 1]);
          cards.forEach((text, i) => card(out, x + i * mstep, top + 70 + MELD_ROW * r, text));
          out.push(["end"]);
          x += Math.max(mstep * (Math.max(cards.length, 1) - 1) + CARD_W, roomOf(specs[j])) + 16;
        }
        end = top + 70 + MELD_ROW * r + CARD_H + 10;
      });
    }
    out[panel] = ["rect", 8, y, width - 16, end - 8 - y, 8, acting ? PANEL_ACT : PANEL, acting ? GOLD : "", 0];
    out.push(["end"]);
    y = end;
  }
  const drawn = y + 8;
  out[0] = ["rect", 0, 0, width, Math.max(drawn, height(n)), 0, FELT, "", 0];
  return { shapes: out, height: drawn };
}

function tableScene(state, header, viewer, options) { return layout(state, header, viewer, options).shapes; }
function drawnHeight(state, header, viewer, options) { return layout(state, header, viewer, options).height; }

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
