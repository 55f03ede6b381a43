// The Digging Down replay viewer: one ES module, no dependencies, no rules.
//
// Everything it shows comes from a timeline (docs/replay-timeline.md) that the
// server built by re-simulating the replay on the engine; this file only
// decodes the per-step deltas, draws a step, and moves between steps. Text from
// the replay (bot names, reasons) is untrusted: it only ever goes in through
// textContent, never as HTML.
//
// Embedding: an element with `data-ddv` and either `data-timeline-url` (a
// match's timeline), `data-upload-url` (a page that opens replay files) or
// `data-live-url` (a running match, watched live) is mounted automatically;
// `mount(element)` does it by hand.
//
// Live: the page polls the match's live view (public only, a few decisions
// behind the table: ladder/viewer/selectors.py) while the tab is visible, adds
// each new view as a step, and follows the newest one unless you went back;
// when the match has finished it opens the full replay (`data-replay-url`).

const SPEEDS = [0.5, 1, 2, 4, 8, 16, 32];
const DEFAULT_SPEED = 4;

// An element: props are attributes (`class`, `text`, `onclick`...), children are
// nodes or strings (as text). null/undefined/false children are left out.
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  fill(el, ...children);
  return el;
}

// Replace an element's children (left-out children as in h()).
function fill(el, ...children) {
  const kids = children.flat().filter((c) => c !== null && c !== undefined && c !== false);
  el.replaceChildren(...kids.map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))));
}

function ms(value) {
  if (value === null || value === undefined) return "–";
  return value >= 10000 ? `${(value / 1000).toFixed(1)} s` : `${value} ms`;
}

function titleCase(word) {
  return String(word || "")
    .toLowerCase()
    .replace(/(^|_)(\w)/g, (_, sep, c) => (sep ? " " : "") + c.toUpperCase());
}

function token(player, label) {
  const colour = String(player.colour).toLowerCase();
  return h("span", { class: `ddv-token ddv-c-${colour}`, title: label }, String(player.seat));
}


// --------------------------------------------------------------------- icons
// Small pictures drawn here (SVG, 16x16 grid, no external files) beside a card's
// label: a mob for cards beaten with a sword, an ore block for the pickaxe's,
// the tools themselves, a torch and a heart. Decorative: the text says it all.
const ICONS = {
  mob: [["rect", { x: 2, y: 2, width: 12, height: 12, rx: 1, class: "ddv-i-mob" }],
    ["rect", { x: 4, y: 5, width: 3, height: 3, class: "ddv-i-dark" }],
    ["rect", { x: 9, y: 5, width: 3, height: 3, class: "ddv-i-dark" }],
    ["rect", { x: 6, y: 9, width: 4, height: 4, class: "ddv-i-dark" }]],
  ore: [["rect", { x: 2, y: 2, width: 12, height: 12, rx: 1, class: "ddv-i-stone" }],
    ["rect", { x: 4, y: 4, width: 3, height: 3, class: "ddv-i-gem" }],
    ["rect", { x: 9, y: 7, width: 3, height: 3, class: "ddv-i-gem" }],
    ["rect", { x: 5, y: 10, width: 2, height: 2, class: "ddv-i-gem" }]],
  pickaxe: [["path", { d: "M2 5 Q8 0 14 5 L13 6 Q8 2.5 3 6 Z", class: "ddv-i-metal" }],
    ["rect", { x: 7, y: 4, width: 2, height: 11, class: "ddv-i-wood" }]],
  sword: [["path", { d: "M12 1 L15 1 L15 4 L7 12 L4 9 Z", class: "ddv-i-metal" }],
    ["rect", { x: 2, y: 9, width: 5, height: 2, transform: "rotate(45 4.5 10)", class: "ddv-i-wood" }],
    ["rect", { x: 1, y: 13, width: 2, height: 2, class: "ddv-i-wood" }]],
  torch: [["rect", { x: 7, y: 6, width: 2, height: 9, class: "ddv-i-wood" }],
    ["path", { d: "M8 0 Q12 4 8 7 Q4 4 8 0 Z", class: "ddv-i-flame" }]],
  heart: [["path", { d: "M8 14 L2 8 Q0 5 2.5 3 Q5 1.5 8 4.5 Q11 1.5 13.5 3 Q16 5 14 8 Z", class: "ddv-i-heart" }]],
};

function icon(name) {
  const shapes = ICONS[name];
  if (!shapes) return null;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", `ddv-icon ddv-icon-${name}`);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("data-icon", name);
  for (const [tag, attrs] of shapes) {
    const el = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    svg.appendChild(el);
  }
  return svg;
}

// A card's picture: what beats it says what it is (a mob is fought, an ore is dug).
function cardIcon(card) {
  if (card.loot === "TORCH") return icon("torch");
  return icon(card.tool === "SWORD" ? "mob" : "ore");
}

// --------------------------------------------------------------------- decoding

// Rebuild every step from its delta: `view` replaces keys (null removes one),
// `items` replaces list elements by index, `seats` and `cave` are carried over
// from the step before when absent.
export function decodeSteps(timeline) {
  const views = [];
  const own = [];
  const caves = [];
  let view = {};
  let seats = {};
  let cave = [];
  for (const step of timeline.steps) {
    view = { ...view };
    for (const [key, value] of Object.entries(step.view || {})) {
      if (value === null) delete view[key];
      else view[key] = value;
    }
    for (const [key, patch] of Object.entries(step.items || {})) {
      const list = view[key].slice();
      for (const [index, value] of Object.entries(patch)) list[Number(index)] = value;
      view[key] = list;
    }
    if (step.seats) seats = step.seats;
    if (step.cave) cave = step.cave;
    views.push(view);
    own.push(seats);
    caves.push(cave);
  }
  return { views, own, caves };
}

// ----------------------------------------------------------------------- viewer

class Viewer {
  constructor(root) {
    this.root = root;
    this.timeline = null;
    this.views = [];
    this.pos = 0;
    this.mode = "public";
    this.modeButtons = new Map();
    this.speed = DEFAULT_SPEED;
    this.timer = null;
    // The first viewer of a page keeps its position in the address and takes the keys;
    // others take keys only while the focus is inside them.
    this.useHash = !document.querySelector("[data-ddv-hash]");
    if (this.useHash) root.setAttribute("data-ddv-hash", "");
    this.build();
    // Nothing to show until a timeline (or a live view) arrives: no empty panels meanwhile.
    this.controls.hidden = this.main.hidden = this.help.hidden = true;
    if (root.dataset.timelineUrl) this.fetchTimeline(root.dataset.timelineUrl);
    if (root.dataset.uploadUrl) this.setUpDrop(root.dataset.uploadUrl);
    if (root.dataset.liveUrl) this.followLive(root.dataset.liveUrl);
    window.addEventListener("hashchange", () => this.readHash());
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  // --- skeleton -----------------------------------------------------------------

  build() {
    const panelId = this.root.dataset.panel;
    const panelScript = panelId && document.getElementById(panelId);
    this.panel = panelScript ? JSON.parse(panelScript.textContent) : null;
    const button = (label, title, role, action) => {
      const onclick = () => {
        this.stop();
        action();
      };
      return h("button", { type: "button", title, "data-role": role, onclick }, label);
    };
    this.playButton = h(
      "button",
      { type: "button", title: "Play / pause (Space)", "data-role": "play", onclick: () => this.toggle() },
      "Play",
    );
    this.speedSelect = h(
      "select",
      {
        "data-role": "speed",
        title: "Decisions per second",
        "aria-label": "Speed (decisions per second)",
        onchange: () => this.setSpeed(),
      },
      SPEEDS.map((s) => h("option", { value: s, selected: s === DEFAULT_SPEED }, `${s}/s`)),
    );
    this.slider = h("input", {
      type: "range",
      min: 0,
      max: 0,
      value: 0,
      step: 1,
      "data-role": "slider",
      "aria-label": "Position in the game",
    });
    this.slider.addEventListener("input", () => {
      this.stop();
      this.go(Number(this.slider.value));
    });
    this.posLabel = h("span", { class: "ddv-pos", "data-role": "pos" });
    this.controls = h(
      "div",
      { class: "ddv-controls", hidden: true },
      button("First", "First decision (Home)", "first", () => this.go(0)),
      button("« Round", "Previous round (PageUp, Shift+←)", "prev-round", () => this.round(-1)),
      button("‹ Prev", "Previous decision (←)", "prev", () => this.go(this.pos - 1)),
      this.playButton,
      button("Next ›", "Next decision (→)", "next", () => this.go(this.pos + 1)),
      button("Round »", "Next round (PageDown, Shift+→)", "next-round", () => this.round(1)),
      button("End", "The end (End)", "last", () => this.go(this.last())),
      this.speedSelect,
      this.slider,
      this.posLabel,
    );
    this.modes = h("div", { class: "ddv-modes", role: "tablist", "data-role": "modes" });
    this.banner = h("div", { class: "ddv-banner", "data-role": "banner", hidden: true });
    this.error = h("div", { class: "ddv-error", "data-role": "error", hidden: true });
    this.status = h("div", { class: "ddv-status", "data-role": "status" });
    this.cave = h("div", { class: "ddv-cave", "data-role": "cave" });
    this.resolution = h("div", { class: "ddv-resolution", "data-role": "resolution" });
    this.seats = h("div", { class: "ddv-seats", "data-role": "seats" });
    this.decision = h("div", { class: "ddv-decision", "data-role": "decision" });
    this.end = h("div", { class: "ddv-end", "data-role": "end", hidden: true });
    this.obsTitle = h("summary", {});
    this.obs = h("pre", { class: "ddv-obs", "data-role": "observation" });
    this.obsBox = h("details", { class: "ddv-obs-box" }, this.obsTitle, this.obs);
    this.log = h("ol", { class: "ddv-log", "data-role": "log", start: 0 });
    this.main = h(
      "div",
      { class: "ddv-main", hidden: true },
      h("div", { class: "ddv-board" }, this.status, this.cave, this.resolution, this.seats),
      h(
        "div",
        { class: "ddv-side" },
        this.decision,
        this.end,
        this.obsBox,
        h("h3", {}, "Event log"),
        this.log,
      ),
    );
    this.help = h(
      "p",
      { class: "ddv-help", hidden: true },
      "Keys: ← → decision · Shift+← → or PageUp/PageDown round · Space play/pause · Home/End. ",
      "The address keeps the position (#d=…): share it to show a decision.",
    );
    this.loading = h("p", { class: "ddv-loading", "data-role": "loading", hidden: true }, "Loading…");
    this.root.append(
      this.error,
      this.loading,
      this.banner,
      this.controls,
      this.modes,
      this.main,
      this.help,
    );
  }

  setUpDrop(url) {
    const zone = this.root.querySelector("[data-role=drop]");
    const input = this.root.querySelector("input[type=file]");
    if (!zone || !input) return;
    const open = (file) => file && this.upload(url, file);
    input.addEventListener("change", () => open(input.files[0]));
    zone.addEventListener("dragover", (event) => {
      event.preventDefault();
      zone.classList.add("ddv-over");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("ddv-over"));
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      zone.classList.remove("ddv-over");
      open(event.dataTransfer.files[0]);
    });
  }

  // --- loading ------------------------------------------------------------------

  async fetchTimeline(url) {
    this.loading.hidden = false;
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      const body = await response.json().catch(() => ({}));
      if (response.ok) this.load(body);
      else this.fail(`${body.detail || response.statusText} (HTTP ${response.status})`);
    } catch (error) {
      this.fail(`The replay could not be loaded: ${error.message}`);
    } finally {
      this.loading.hidden = true;
    }
  }

  async upload(url, file) {
    this.loading.hidden = false;
    this.fail("");
    this.root.dataset.file = file.name;
    try {
      const gz = file.name.endsWith(".gz") || file.type === "application/gzip";
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "Content-Type": gz ? "application/gzip" : "application/json",
          Accept: "application/json",
        },
        body: file,
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) this.load(body);
      else if (body.timeline) this.load(body.timeline); // 422: shown up to the difference
      else this.fail(`${file.name}: ${body.detail || response.statusText} (HTTP ${response.status})`);
    } catch (error) {
      this.fail(`${file.name} could not be sent: ${error.message}`);
    } finally {
      this.loading.hidden = true;
    }
  }

  fail(message) {
    this.error.textContent = message;
    this.error.hidden = !message;
  }

  load(timeline) {
    this.stop();
    this.timeline = timeline;
    Object.assign(this, decodeSteps(timeline));
    this.mode = "public";
    const v = timeline.verification;
    this.banner.hidden = v.ok;
    fill(
      this.banner,
      v.ok
        ? null
        : [
            h("strong", {}, "This replay does not verify. "),
            h("span", { "data-role": "difference" }, v.first_difference),
            h("br"),
            `It is shown up to decision ${v.decision}, the last point where the engine agrees `,
            "with it. ",
            h("button", { type: "button", onclick: () => this.go(this.last()) }, "Go there"),
          ],
    );
    const empty = !this.views.length;
    this.controls.hidden = this.main.hidden = this.help.hidden = empty;
    if (empty) {
      fill(this.modes);
      return;
    }
    this.slider.max = this.last();
    this.buildModes();
    this.buildLog();
    this.root.dataset.loaded = "true";
    this.root.dataset.decisions = String(timeline.decisions.length);
    const { pos, mode } = this.addressed();
    if (mode !== null) this.mode = mode;
    this.go(pos === null ? 0 : pos, false);
  }

  last() {
    return this.views.length - 1;
  }

  // --- live ---------------------------------------------------------------------------

  followLive(url) {
    this.live = { plies: [], events: new Map(), seats: [], timer: null, done: false };
    this.views = [];
    this.own = [];
    this.caves = [];
    const poll = () => {
      if (this.live.done || document.hidden) return;
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then((r) => (r.ok ? r.json() : null))
        .then((data) => data && this.liveFrame(data))
        .catch(() => {});
    };
    this.live.timer = setInterval(poll, 1500);
    document.addEventListener("visibilitychange", () => !document.hidden && poll());
    poll();
  }

  liveFrame(data) {
    const live = this.live;
    this.root.dataset.liveStatus = data.status;
    if (!data.live || !data.view) {
      fill(this.banner, data.why ? `Not live: ${data.why}.` : "");
      this.banner.hidden = !data.why;
      if (data.status === "finished" || data.status === "errored" || data.status === "cancelled") {
        live.done = true;
        clearInterval(live.timer);
        const replay = this.root.dataset.replayUrl;
        if (data.status === "finished" && replay) {
          fill(this.banner, "The match has finished: opening its full replay…");
          window.location.assign(replay);
        }
      }
      return;
    }
    this.banner.hidden = true;
    if (live.plies.length && live.plies[live.plies.length - 1] === data.ply) return;
    const following = !this.views.length || this.pos === this.last();
    live.plies.push(data.ply);
    const step = live.plies.length - 1;
    for (const e of data.events) {
      if (!live.events.has(e.i)) live.events.set(e.i, { d: step, kind: e.kind, seat: e.seat, text: e.text });
    }
    this.views.push(data.view);
    this.own.push({});
    this.caves.push([]); // never a face-down card: the live view has none to give
    this.timeline = {
      verification: { ok: true, first_difference: "" },
      seats: data.seats.map((s) => ({ seat: s.seat, bot: s.bot, label: `${s.bot || "seat " + s.seat} (seat ${s.seat})` })),
      observation_keys: Object.keys(data.view),
      decisions: [],
      events: [...live.events.keys()].sort((a, b) => a - b).map((i) => live.events.get(i)),
      result: null,
    };
    this.controls.hidden = this.main.hidden = false;
    this.help.hidden = true;
    fill(this.modes, h("span", { class: "ddv-live-badge", "data-role": "live" }, "Live: the public view, a few decisions behind"));
    this.slider.max = this.last();
    this.buildLog();
    this.root.dataset.loaded = "true";
    this.root.dataset.liveSteps = String(this.views.length);
    this.root.dataset.ply = String(data.ply);
    this.go(following ? this.last() : this.pos, false);
  }

  // --- position -----------------------------------------------------------------

  go(pos, remember = true) {
    if (!this.views.length) return;
    this.pos = Math.max(0, Math.min(this.last(), Number.isFinite(pos) ? pos : 0));
    this.render();
    if (remember) this.writeHash();
  }

  round(direction) {
    const starts = this.timeline.rounds.map((r) => r.decision);
    if (direction > 0) {
      const next = starts.find((d) => d > this.pos);
      this.go(next === undefined ? this.last() : next);
    } else {
      const before = starts.filter((d) => d < this.pos);
      this.go(before.length ? before[before.length - 1] : 0);
    }
  }

  toggle() {
    if (this.timer) this.stop();
    else this.play();
  }

  setSpeed() {
    this.speed = Number(this.speedSelect.value);
    if (this.timer) this.play();
  }

  play() {
    if (this.timer) clearInterval(this.timer);
    if (this.pos >= this.last()) this.go(0);
    this.timer = setInterval(() => {
      if (this.pos >= this.last()) this.stop();
      else this.go(this.pos + 1);
    }, 1000 / this.speed);
    this.playButton.textContent = "Pause";
    this.root.dataset.playing = "true";
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.playButton.textContent = "Play";
    delete this.root.dataset.playing;
  }

  onKey(event) {
    if (!this.views.length || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    const inside = target instanceof Node && this.root.contains(target);
    if (!this.useHash && !inside) return;
    if (target instanceof Element && target.closest("input, textarea, select, [contenteditable]")) {
      return;
    }
    if (target instanceof HTMLButtonElement && (event.key === " " || event.key === "Enter")) return;
    const actions = {
      ArrowRight: () => (event.shiftKey ? this.round(1) : this.go(this.pos + 1)),
      ArrowLeft: () => (event.shiftKey ? this.round(-1) : this.go(this.pos - 1)),
      PageDown: () => this.round(1),
      PageUp: () => this.round(-1),
      Home: () => this.go(0),
      End: () => this.go(this.last()),
      " ": () => this.toggle(),
    };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    if (event.key !== " ") this.stop();
    action();
  }

  // The position and view the address asks for ({pos, mode}; either may be null).
  addressed() {
    if (!this.useHash) return { pos: null, mode: null };
    const params = new URLSearchParams(location.hash.slice(1));
    const query = new URLSearchParams(location.search);
    const raw = params.get("d") ?? query.get("d") ?? query.get("step");
    const mode = params.get("view") ?? query.get("view");
    let pos = raw === "end" ? this.last() : Number.parseInt(raw ?? "", 10);
    if (Number.isNaN(pos)) pos = null;
    return { pos, mode: mode && this.modeButtons.has(mode) ? mode : null };
  }

  readHash() {
    if (!this.views.length) return;
    const { pos, mode } = this.addressed();
    if ((pos === null || pos === this.pos) && (mode === null || mode === this.mode)) return;
    if (mode !== null) this.mode = mode;
    this.go(pos === null ? this.pos : pos, false);
  }

  writeHash() {
    if (!this.useHash) return;
    const hash = `#d=${this.pos}` + (this.mode === "public" ? "" : `&view=${this.mode}`);
    if (location.hash !== hash) {
      history.replaceState(null, "", location.pathname + location.search + hash);
    }
  }

  // --- views: public, full cave, what seat N saw ----------------------------------

  buildModes() {
    this.modeButtons = new Map();
    const add = (mode, label, title) => {
      const onclick = () => {
        this.mode = mode;
        this.go(this.pos);
      };
      const b = h("button", { type: "button", role: "tab", title, "data-mode": mode, onclick }, label);
      this.modeButtons.set(mode, b);
      return b;
    };
    fill(
      this.modes,
      add("public", "Public view", "What every seat could know at this moment"),
      add("full", "Full cave", "Every card of the dealt cave, faces included (after the match)"),
      this.timeline.seats.map((s) =>
        add(`seat-${s.seat}`, `What seat ${s.seat} saw`, `The observation of ${s.label}`),
      ),
    );
  }

  seatObservation(seat, pos = this.pos) {
    const view = this.views[pos];
    const own = this.own[pos][String(seat)] || {};
    const keys = [...this.timeline.observation_keys];
    for (const key of [...Object.keys(view), ...Object.keys(own)]) {
      if (!keys.includes(key)) keys.push(key);
    }
    const obs = {};
    for (const key of keys) {
      if (key in own) {
        if (own[key] !== null) obs[key] = own[key];
      } else if (key in view) obs[key] = view[key];
    }
    return obs;
  }

  // --- drawing --------------------------------------------------------------------

  render() {
    const t = this.timeline;
    const pos = this.pos;
    const seatMode = this.mode.startsWith("seat-") ? Number(this.mode.slice(5)) : null;
    const obs = seatMode === null ? this.views[pos] : this.seatObservation(seatMode);
    const decision = t.decisions[pos];
    this.root.dataset.pos = String(pos);
    this.root.dataset.mode = this.mode;
    this.slider.value = String(pos);
    this.posLabel.textContent = this.live
      ? `Live · step ${pos + 1} of ${this.views.length} · after decision ${this.live.plies[pos]}`
      : decision
        ? `Decision ${pos} of ${t.decisions.length} · round ${decision.round} · turn ${decision.turn}`
        : `End · after ${t.decisions.length} decisions`;
    this.posLabel.dataset.d = String(pos);
    for (const [mode, b] of this.modeButtons) {
      b.setAttribute("aria-selected", String(mode === this.mode));
    }
    this.drawStatus(obs);
    this.drawCave(obs, this.mode === "full" ? this.caves[pos] : null);
    this.drawResolution(obs);
    this.drawSeats(obs, seatMode);
    this.drawDecision(decision);
    this.drawEnd(pos === this.last() && !this.live);
    this.drawObservation(seatMode, decision);
    this.markLog();
  }

  seatLabel(seat) {
    const s = this.timeline.seats[seat];
    return s ? s.label : `seat ${seat}`;
  }

  drawStatus(obs) {
    const hearts = h(
      "span",
      { class: "ddv-hearts", "data-role": "hearts", title: `${obs.hearts} hearts left (shared)` },
      icon("heart"),
      ` ${obs.hearts}`,
    );
    const stack = Object.entries(obs.exchange_stack || {})
      .map(([recipe, n]) => `${titleCase(recipe)} ${n}`)
      .join(", ");
    const acting = obs.acting_seat >= 0 ? this.seatLabel(obs.acting_seat) : "nobody (over)";
    const objectives = (obs.objectives || []).join(", ");
    fill(
      this.status,
      h("span", { "data-role": "phase" }, h("b", {}, obs.phase), ` · round ${obs.round} · turn ${obs.turn}`),
      h("span", {}, `Lead: ${this.seatLabel(obs.lead)}`),
      h("span", { "data-role": "acting" }, "To act: ", h("b", {}, acting)),
      hearts,
      h("span", {}, `Supply: ${obs.supply} torches`),
      h("span", {}, `Torch tiles free: ${obs.free_tiles}`),
      h("span", { title: "Exchange cards left" }, `Exchange: ${stack}`),
      h("span", {}, `${titleCase(obs.difficulty)} · objectives ${objectives}`),
    );
  }

  cardFace(card, extra = "") {
    if (!card) return null;
    const loot = card.loot === "TORCH" ? `${card.torches} torches` : card.loot === "NONE" ? "" : card.loot;
    const facts = [`${card.tool === "SWORD" ? "sword" : "pickaxe"} ${card.strength}`];
    if (card.damage) facts.push(`damage ${card.damage}`);
    if (loot) facts.push(loot);
    const material = String(card.material).toLowerCase();
    return h(
      "div",
      {
        class: `ddv-card ddv-face ddv-${material}${card.enchanted ? " ddv-sleeved" : ""}${extra}`,
        "data-card": card.id,
        title: `${titleCase(card.material)} ${card.name}${card.enchanted ? ", enchanted" : ""}`,
      },
      h("span", { class: "ddv-name" }, cardIcon(card), card.name),
      h("span", { class: "ddv-facts" }, facts.join(" · ")),
    );
  }

  cardBack(material, sleeved) {
    const m = String(material).toLowerCase();
    const title = `${titleCase(m)} card, face down${sleeved ? ", enchanted" : ""}`;
    return h("div", { class: `ddv-card ddv-back ddv-${m}${sleeved ? " ddv-sleeved" : ""}`, title }, titleCase(m));
  }

  drawCave(obs, cave) {
    const players = obs.players || [];
    const columns = (obs.passages || []).map((passage) => {
      const p = passage.index;
      const dealt = this.caves[0][p] ? this.caves[0][p].length : passage.count;
      const top = passage.count ? passage.backs[passage.count - 1] : null;
      const here = players.filter((pl) => pl.position === p && !pl.eliminated);
      const cards = [];
      for (let i = passage.count - 1; i >= 0; i--) {
        if (i === passage.count - 1 && passage.top) cards.push(this.cardFace(passage.top, " ddv-top"));
        else if (cave) cards.push(this.cardFace(this.timeline.cards[cave[p][i]], " ddv-hidden"));
        else cards.push(this.cardBack(passage.backs[i], passage.sleeved[i]));
      }
      const layer = top ? `${passage.count} of ${dealt} left · ${titleCase(top)} layer` : `empty (all ${dealt} taken)`;
      const tile = passage.tile
        ? h("span", { class: "ddv-tile", title: "A torch tile lies in front of this passage" }, "torch tile")
        : null;
      return h(
        "div",
        { class: "ddv-passage", "data-passage": p },
        h(
          "div",
          { class: "ddv-passage-head" },
          h("b", {}, `Passage ${p}`),
          tile,
          h("div", { class: "ddv-layer" }, layer),
          h("div", { class: "ddv-here" }, here.map((pl) => token(pl, this.seatLabel(pl.seat)))),
        ),
        h("div", { class: "ddv-stack" }, cards),
      );
    });
    const atBase = players.filter((pl) => pl.position < 0 && !pl.eliminated);
    fill(
      this.cave,
      h(
        "div",
        { class: "ddv-base" },
        h("b", {}, "Base: "),
        atBase.length ? atBase.map((pl) => token(pl, this.seatLabel(pl.seat))) : "nobody",
      ),
      h("div", { class: "ddv-passages" }, columns),
    );
  }

  drawResolution(obs) {
    const r = obs.resolution;
    this.resolution.hidden = !r;
    if (!r) {
      fill(this.resolution);
      return;
    }
    const helpers = r.helpers.length ? r.helpers.map((s) => this.seatLabel(s)).join(", ") : "none";
    const committer = r.committer >= 0 ? `, ${this.seatLabel(r.committer)} committing` : "";
    fill(
      this.resolution,
      h("b", {}, `Resolving passage ${r.passage}: `),
      this.cardFace(r.card),
      h("span", {}, `owner ${this.seatLabel(r.owner)} · helpers ${helpers} · `),
      h(
        "span",
        {},
        r.attempting
          ? `attempting: ${r.committed} of ${r.card.strength} committed${committer}`
          : "the owner chooses: attempt or leave",
      ),
    );
  }

  drawSeats(obs, seatMode) {
    const objectives = obs.objectives || [];
    const flag = (on, text, extra = "") => (on ? h("span", { class: `ddv-flag${extra}` }, text) : null);
    const cards = (list) =>
      list.length ? list.map((c) => h("span", { class: "ddv-loot", title: c.loot }, cardIcon(c), c.name)) : "–";
    const seats = (obs.players || []).map((pl) => {
      const items = Object.entries(pl.items || {})
        .filter(([, n]) => n > 0)
        .map(([kind, n]) => `${n} ${kind}`);
      const used = pl.torches + Object.values(pl.items || {}).reduce((a, b) => a + b, 0);
      const acting = pl.seat === obs.acting_seat;
      const tools = pl.tools.map((tool) =>
        h(
          "span",
          { class: `ddv-tool${tool.active ? "" : " ddv-tired"}`, title: tool.active ? "active" : "tired" },
          icon(tool.kind === "SWORD" ? "sword" : "pickaxe"),
          `${tool.name} ${tool.strength}`,
        ),
      );
      const goals = objectives.map((o) => {
        const done = pl.completed.includes(o);
        return h("span", { class: done ? "ddv-done" : "ddv-todo" }, `${done ? "✔" : "○"} ${o}`);
      });
      const colour = String(pl.colour).toLowerCase();
      return h(
        "div",
        {
          class: `ddv-seat ddv-c-${colour}${acting ? " ddv-is-acting" : ""}${pl.eliminated ? " ddv-is-out" : ""}`,
          "data-seat": pl.seat,
        },
        h(
          "div",
          { class: "ddv-seat-head" },
          h("b", {}, this.seatLabel(pl.seat)),
          ` ${titleCase(pl.colour)} `,
          flag(acting, "to act"),
          flag(pl.seat === obs.lead, "lead"),
          flag(pl.ready, "ready"),
          flag(pl.forfeited, "forfeited"),
          flag(pl.eliminated && !pl.forfeited, "eliminated"),
          flag(pl.seat === seatMode, "this view"),
        ),
        h("div", {}, `Position: ${pl.position < 0 ? "base" : `passage ${pl.position}`}`),
        h(
          "div",
          { "data-role": "inventory" },
          `Inventory ${used}/${pl.capacity}: `,
          icon("torch"),
          `${pl.torches} torches`,
          items.length ? `, ${items.join(", ")}` : "",
          ` · stash ${pl.stash}`,
        ),
        h("div", { class: "ddv-tools" }, "Tools: ", tools.length ? tools : "none"),
        h("div", {}, "Unsecured: ", cards(pl.unsecured)),
        h("div", {}, "Secured: ", cards(pl.secured)),
        h("div", { "data-role": "objectives" }, "Objectives: ", goals, pl.faults ? ` · faults ${pl.faults}` : ""),
      );
    });
    fill(this.seats, seats);
  }

  drawDecision(decision) {
    this.decision.hidden = !decision;
    if (!decision) return;
    const kind = decision.kind === "action" ? (decision.forced ? "forced" : "chosen") : decision.kind;
    const legal = decision.legal.map((a, i) => {
      const chosen = i === decision.chosen;
      const played = i === decision.played && !chosen;
      return h(
        "li",
        { class: chosen ? "ddv-chosen" : played ? "ddv-default" : "", "data-index": i },
        a.text,
        chosen ? h("span", { class: "ddv-badge" }, decision.forced ? " forced (only choice)" : " chosen") : null,
        played ? h("span", { class: "ddv-badge" }, " default played") : null,
      );
    });
    let time = "Not asked.";
    if (decision.asked) time = `Took ${ms(decision.think_ms)} · bank left ${ms(decision.bank_left_ms)}`;
    else if (decision.forced) time = "Played by the engine (the only legal action): the bot was not asked.";
    const reason = decision.kind === "action"
      ? null
      : h(
          "div",
          { class: "ddv-fault", "data-role": "reason" },
          `${decision.kind === "fault" ? "Fault" : "Forfeit"}`,
          decision.fault_kind ? ` (${decision.fault_kind})` : "",
          `: ${decision.reason}`,
        );
    const [first, count] = decision.events;
    const followed = this.timeline.events
      .slice(first, first + count)
      .map((e) => h("li", { class: `ddv-ev-${String(e.kind).toLowerCase()}` }, e.text));
    fill(
      this.decision,
      h("h3", {}, `Decision ${decision.d}`),
      h(
        "div",
        { class: "ddv-who" },
        h("span", { "data-role": "decision-seat", "data-seat": decision.seat }, this.seatLabel(decision.seat)),
        ` · ${decision.phase} · `,
        h("span", { class: `ddv-kind ddv-kind-${kind}`, "data-role": "decision-kind" }, kind),
      ),
      reason,
      h("div", { "data-role": "time" }, time),
      legal.length ? h("div", {}, `Legal actions (${legal.length}):`) : null,
      h("ol", { class: "ddv-legal", "data-role": "legal", start: 0 }, legal),
      h("div", {}, "What followed:"),
      h("ul", { class: "ddv-followed", "data-role": "followed" }, followed),
    );
  }

  drawEnd(atEnd) {
    const t = this.timeline;
    this.end.hidden = !atEnd;
    if (!atEnd) return;
    if (!t.result) {
      const why = t.verification.first_difference || "The game did not reach its end.";
      fill(this.end, h("h3", {}, "The replay stops here"), h("p", {}, why));
      return;
    }
    const panel = new Map((this.panel ? this.panel.seats : []).map((s) => [s.seat, s]));
    const rating = (m) => {
      if (!m || m.rating_after === null || m.rating_before === null) return "–";
      const sign = m.rating_delta >= 0 ? "+" : "";
      return `${m.rating_before.toFixed(2)} → ${m.rating_after.toFixed(2)} (${sign}${m.rating_delta.toFixed(2)})`;
    };
    const rows = [...t.result.seats]
      .sort((a, b) => a.rank - b.rank || a.seat - b.seat)
      .map((s) =>
        h(
          "tr",
          { "data-seat": s.seat, "data-rank": s.rank },
          h("td", {}, String(s.rank)),
          h("td", {}, this.seatLabel(s.seat)),
          h("td", {}, s.ended + (s.reason ? ` (${s.reason})` : "")),
          h("td", {}, s.completed.length ? s.completed.join(", ") : "none"),
          h("td", {}, String(s.loot_points)),
          h("td", {}, String(s.torches)),
          h("td", {}, String(s.faults)),
          h("td", { "data-role": "rating" }, rating(panel.get(s.seat))),
        ),
      );
    const r = t.result;
    const firsts = r.seats.filter((s) => s.rank === 1).map((s) => this.seatLabel(s.seat));
    const winner = r.winner >= 0 ? `${this.seatLabel(r.winner)} wins` : `first: ${firsts.join(", ")}`;
    const headers = ["Rank", "Seat", "Ended", "Objectives", "Loot", "Torches", "Faults", "Rating"];
    fill(
      this.end,
      h("h3", {}, "The end"),
      h(
        "p",
        { "data-role": "reason" },
        `${winner} · ${r.reason.replaceAll("_", " ")} after ${r.turns} turns, ${r.rounds} rounds`,
      ),
      h(
        "table",
        { class: "ddv-ranks", "data-role": "ranks" },
        h("thead", {}, h("tr", {}, headers.map((c) => h("th", {}, c)))),
        h("tbody", {}, rows),
      ),
    );
  }

  drawObservation(seatMode, decision) {
    this.obsBox.hidden = this.mode === "full";
    if (this.mode === "full") return;
    if (seatMode === null) {
      this.obsTitle.textContent = "The public view as JSON (what every seat could know)";
      this.obs.dataset.seat = "";
      this.obs.dataset.d = String(this.pos);
      this.obs.textContent = JSON.stringify(this.views[this.pos], null, 1);
      return;
    }
    const sent = decision && decision.seat === seatMode && decision.asked;
    this.obsTitle.textContent = sent
      ? `The observation sent to seat ${seatMode} for decision ${decision.d} (JSON)`
      : `What seat ${seatMode} could see here (JSON; it was not asked at this step)`;
    this.obs.dataset.seat = String(seatMode);
    this.obs.dataset.d = String(this.pos);
    this.obs.textContent = JSON.stringify(this.seatObservation(seatMode), null, 1);
    this.obsBox.open = true;
  }

  // --- event log ----------------------------------------------------------------------

  buildLog() {
    this.logItems = new Map();
    const items = this.timeline.events.map((e, i) => {
      const d = Math.max(0, e.d);
      const li = h(
        "li",
        {
          class: `ddv-ev-${String(e.kind).toLowerCase()}`,
          "data-d": d,
          "data-i": i,
          title: `Event ${i} (decision ${d}): click to go there`,
        },
        e.text,
      );
      if (!this.logItems.has(d)) this.logItems.set(d, []);
      this.logItems.get(d).push(li);
      return li;
    });
    fill(this.log, items);
    this.log.onclick = (event) => {
      const li = event.target.closest("li[data-d]");
      if (!li) return;
      this.stop();
      this.go(Number(li.dataset.d));
    };
    this.marked = [];
  }

  markLog() {
    for (const li of this.marked) li.classList.remove("ddv-now");
    this.marked = this.logItems.get(this.pos) || [];
    for (const li of this.marked) li.classList.add("ddv-now");
    const first = this.marked[0];
    if (!first) {
      if (this.pos === this.last()) this.log.scrollTop = this.log.scrollHeight; // the end
      return;
    }
    const top = first.offsetTop;
    if (top < this.log.scrollTop || top > this.log.scrollTop + this.log.clientHeight - 40) {
      this.log.scrollTop = Math.max(0, top - 40);
    }
  }
}

export function mount(root) {
  if (!root.ddv) root.ddv = new Viewer(root);
  return root.ddv;
}

for (const root of document.querySelectorAll("[data-ddv]")) mount(root);
