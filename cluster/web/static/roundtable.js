// The roundtable page: the discussion streams in (server-sent events), the user's box, the mind map as a collapsible
// tree redrawn as snippets land, and each citation opening its lines (app.js's openSource). Text from a
// document or a model is set with textContent, never as markup.
"use strict";

const newTable = document.getElementById("roundtable-new");
if (newTable) newTable.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(newTable);
  const started = await api("/api/roundtables", {method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({topic: form.get("topic"), source: form.get("source") || "corpus"})});
  location.href = `/roundtable/${encodeURIComponent(started.id)}`;
});

const rt = document.querySelector(".rt-layout");
if (rt) {
  const id = rt.dataset.session, base = `/api/roundtables/${encodeURIComponent(id)}`;
  const discussion = document.getElementById("discussion"), map = document.getElementById("mindmap");
  const state = document.getElementById("rt-state"), experts = document.getElementById("experts");
  const seen = new Set(), open = new Set();
  let next = 0, known = null;

  function utterance(u) {
    const item = el("li", {class: `${u.role}${u.warm_start ? " warm" : ""}${u.simulated ? " simulated" : ""}`,
                           "data-turn": u.turn});
    if (u.role === "expert" && u.focus) item.append(el("span", {class: "focus"}, `on: ${u.focus}`));
    item.append(el("span", {class: "who"}, `${u.speaker}${u.warm_start ? " (warm start)" : ""}:`));
    const text = el("span", {class: "text"});
    for (const part of u.text.split(/(\[\d+\])/)) {
      const cite = part.match(/^\[(\d+)\]$/);
      text.append(cite ? el("a", {class: "cite", href: "#", "data-turn": u.turn, "data-n": cite[1]}, part) : part);
    }
    item.append(text);
    return item;
  }

  function node(n, fresh) {
    const box = el("details", {"data-node": n.id});
    if (open.has(n.id) || !known) box.open = true;
    const count = n.snippets.length ? ` (${n.snippets.length})` : "";
    box.append(el("summary", {class: fresh.has(n.id) ? "new" : ""}, n.concept + count));
    const snips = el("ul", {class: "snips"});
    for (const s of n.snippets) {
      snips.append(el("li", {}, el("a", {class: "cite", href: "#", "data-point": s.point_id},
                                      `${s.title}, lines ${s.line_start}–${s.line_end}`)));
    }
    if (n.snippets.length) box.append(snips);
    for (const c of n.children) box.append(node(c, fresh));
    box.addEventListener("toggle", () => { if (box.open) open.add(n.id); else open.delete(n.id); });
    return box;
  }

  function drawMap(tree) {
    const ids = new Set();
    (function walk(n) { ids.add(n.id); n.children.forEach(walk); })(tree);
    const fresh = known ? new Set([...ids].filter((x) => !known.has(x))) : new Set();
    if (!known) ids.forEach((x) => open.add(x));
    fresh.forEach((x) => open.add(x));
    known = ids;
    map.replaceChildren(...tree.children.map((c) => node(c, fresh)));
  }

  function show(got) {
    for (const e of got.events) {
      if (e.kind === "utterance" && !seen.has(e.utterance.turn)) {
        seen.add(e.utterance.turn);
        discussion.append(utterance(e.utterance));
      }
      if (e.kind === "mindmap") drawMap(e.mindmap);
    }
    next = got.next;
    state.textContent = got.state + (got.error ? `: ${got.error}` : "");
    experts.textContent = got.experts.join(", ");
  }

  // server-sent events: each turn as it is said; a dropped stream is opened again from the last event seen
  function listen() {
    const stream = new EventSource(`${base}/stream?since=${next}`);
    stream.onmessage = (message) => show(JSON.parse(message.data));
    stream.onerror = () => {
      stream.close();
      state.textContent = "reconnecting…";
      setTimeout(listen, 1000);
    };
  }

  async function say(message) {
    await api(`${base}/turn`, {method: "POST", headers: {"content-type": "application/json"},
                               body: JSON.stringify({message})});
  }

  document.getElementById("rt-say").addEventListener("submit", async (event) => {
    event.preventDefault();
    const box = event.target.elements.message;
    const message = box.value.trim();
    box.value = "";
    await say(message);
  });
  document.getElementById("rt-go-on").addEventListener("click", () => say(""));
  // nobody at the keyboard for N turns: a simulated user asks now and then (raystorm roundtable --observe)
  document.getElementById("rt-observe").addEventListener("click", async () => {
    const turns = Math.max(1, Math.min(50, parseInt(document.getElementById("rt-observe-turns").value, 10) || 5));
    await api(`${base}/observe`, {method: "POST", headers: {"content-type": "application/json"},
                                  body: JSON.stringify({turns})});
  });
  document.getElementById("rt-report").addEventListener("click", async () => {
    const out = document.getElementById("rt-report-body");
    out.hidden = false;
    out.textContent = "writing…";
    const done = await api(`${base}/report`, {method: "POST"});
    out.textContent = done.report;
  });

  rt.addEventListener("click", async (event) => {
    const cite = event.target.closest(".cite");
    if (!cite) return;
    event.preventDefault();
    const query = cite.dataset.point ? `point=${encodeURIComponent(cite.dataset.point)}`
                                     : `turn=${cite.dataset.turn}&n=${cite.dataset.n}`;
    await openSource(`${base}/source?${query}`,
                     (src) => cite.dataset.n ? `[${cite.dataset.n}] ${src.title}` : src.title);
  });

  listen();
}
