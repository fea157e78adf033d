// The replay viewer: steps through the frames embedded by shanghai_env/draw/replay.py, drawn by
// table.js (inlined before this script).
"use strict";

const PER_PLAYER = ["hands", "melds", "buys", "down", "scores"];

// --- the viewer ---------------------------------------------------------------------------------

function decodeFrames(encoded) {
  const states = [];
  let prev = null;
  for (const diff of encoded) {
    const state = prev === null ? {} : Object.assign({}, prev);
    for (const key of Object.keys(diff)) {
      const value = diff[key];
      if (prev !== null && PER_PLAYER.includes(key) && !Array.isArray(value)) {
        const arr = prev[key].slice();
        for (const i of Object.keys(value)) arr[Number(i)] = value[i];
        state[key] = arr;
      } else {
        state[key] = value;
      }
    }
    states.push(state);
    prev = state;
  }
  return states;
}

function startViewer(data) {
  const header = data.header;
  const states = decodeFrames(data.frames);
  const captions = data.captions;
  const last = states.length - 1;
  const dealStarts = [];
  states.forEach((s, i) => { if (i === 0 || (s.deal !== states[i - 1].deal)) dealStarts.push(i); });
  const el = (id) => document.getElementById(id);
  const slider = el("slider"), dealSelect = el("deal"), viewSelect = el("view");
  slider.max = String(last);
  dealStarts.forEach((start, d) => {
    const option = document.createElement("option");
    option.value = String(start);
    const c = states[start].contract;
    option.textContent = "deal " + (d + 1) + " \u00b7 contract " + c + ": " + header.describe[String(c)];
    dealSelect.appendChild(option);
  });
  for (let p = 0; p < header.players; p++) {
    const option = document.createElement("option");
    option.value = String(p);
    const named = header.names[p] && header.names[p] !== "player_" + p ? " (" + header.names[p] + ")" : "";
    option.textContent = player(p) + "'s view" + named;
    viewSelect.appendChild(option);
  }
  let frame = 0, viewer = null, timer = null;

  function dealOf(i) {
    let d = 0;
    dealStarts.forEach((start, k) => { if (start <= i) d = k; });
    return d;
  }

  function show(i, fromHash) {
    frame = Math.max(0, Math.min(last, i));
    const state = states[frame];
    draw(state);
    el("caption").textContent = captions[frame];
    el("where").textContent = "frame " + frame + " / " + last;
    // always five lines (blank ones first), so that the table below never moves
    const log = el("log");
    log.textContent = "";
    for (let k = frame - 5; k < frame; k++) {
      const line = document.createElement("div");
      line.textContent = k >= 0 ? captions[k] : "\u00a0";
      log.appendChild(line);
    }
    slider.value = String(frame);
    const d = dealOf(frame);
    dealSelect.value = String(dealStarts[d]);
    viewSelect.value = viewer === null ? "all" : String(viewer);
    const hash = "#step=" + frame + "&view=" + (viewer === null ? "all" : viewer);
    if (!fromHash && location.hash !== hash) history.replaceState(null, "", hash);
  }

  // The table is scaled to fit the window's height (at the largest it can grow to, so that
  // the scale does not change as players go down): every player's panel stays in view.
  // The table is laid out for the width it has, one unit to a CSS pixel (WIDTH units at most):
  // never scaled down, so no text in it is under 12 px, and on a phone nothing is off the side
  // (text wraps, a player's score and buys go below their name).
  function draw(state) {
    const box = el("table");
    const width = Math.max(NARROWEST, Math.min(WIDTH, Math.floor(box.clientWidth)));
    const options = { width: width };
    const h = drawnHeight(state, header, viewer, options);
    box.innerHTML = sceneSvg(tableScene(state, header, viewer, options), width, h);
    box.querySelector("svg").style.width = width + "px";
  }

  let resized = null;
  function redraw() {
    clearTimeout(resized);
    resized = setTimeout(() => draw(states[frame]), 100);
  }

  function fromHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const v = params.get("view");
    viewer = v === null || v === "all" || isNaN(Number(v)) ? null :
      Math.max(0, Math.min(header.players - 1, Number(v)));
    const step = Number(params.get("step"));
    show(isNaN(step) ? 0 : step, true);
  }

  function dealJump(delta) {
    const d = dealOf(frame);
    const target = delta < 0 && frame > dealStarts[d] ? d : d + delta;
    show(target < 0 ? 0 : target >= dealStarts.length ? last : dealStarts[target]);
  }

  function play() {
    if (timer !== null) { clearInterval(timer); timer = null; el("play").textContent = "\u25b6 play"; return; }
    el("play").textContent = "\u2016 pause";
    timer = setInterval(() => { if (frame >= last) play(); else show(frame + 1); }, 600);
  }

  el("first").onclick = () => show(0);
  el("prevdeal").onclick = () => dealJump(-1);
  el("prev").onclick = () => show(frame - 1);
  el("play").onclick = play;
  el("next").onclick = () => show(frame + 1);
  el("nextdeal").onclick = () => dealJump(1);
  el("last").onclick = () => show(last);
  slider.oninput = () => show(Number(slider.value));
  dealSelect.onchange = () => show(Number(dealSelect.value));
  viewSelect.onchange = () => { viewer = viewSelect.value === "all" ? null : Number(viewSelect.value); show(frame); };
  window.addEventListener("hashchange", fromHash);
  window.addEventListener("resize", redraw);
  document.addEventListener("keydown", (e) => {
    if (e.target && (e.target.tagName === "SELECT" || e.target.tagName === "INPUT")) return;
    const keys = {
      ArrowRight: () => show(frame + 1), ArrowLeft: () => show(frame - 1),
      ArrowDown: () => dealJump(1), ArrowUp: () => dealJump(-1),
      PageDown: () => dealJump(1), PageUp: () => dealJump(-1),
      Home: () => show(0), End: () => show(last), " ": play,
    };
    if (keys[e.key]) { keys[e.key](); e.preventDefault(); }
  });
  fromHash();
}

startViewer(JSON.parse(document.getElementById("replay-data").textContent));
