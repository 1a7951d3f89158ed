// raystorm's pages: citations open their source lines, ask streams its hops, reports show progress.
// Everything from a document or a model is set with textContent, never as markup.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

async function api(path, options) {
  const reply = await fetch(path, options);
  const body = await reply.json();
  if (!reply.ok) throw new Error(body.error || reply.statusText);
  return body;
}

// --- a report's citations ----------------------------------------------------------------------
const layout = document.querySelector(".report-layout");
if (layout) {
  const run = layout.dataset.run;
  layout.addEventListener("click", async (event) => {
    const cite = event.target.closest(".cite");
    if (!cite) return;
    event.preventDefault();
    await openSource(`/api/reports/${encodeURIComponent(run)}/source/${cite.dataset.n}`,
                     (src) => `[${src.n}] ${src.title}`);
  });
}

// A citation's lines in the page's source panel (#source): `path` answers {title, snippets}; `heading(src)` titles it.
// The report page and the roundtable page both open their citations here.
async function openSource(path, heading) {
  const panel = document.getElementById("source"), body = document.getElementById("source-body");
  panel.hidden = false;
  body.replaceChildren("loading…");
  try {
    const src = await api(path);
    document.getElementById("source-title").textContent = heading(src);
    body.replaceChildren(...src.snippets.map(showSnippet));
  } catch (err) {
    body.replaceChildren(el("p", {class: "error"}, err.message));
  }
}

function showSnippet(s) {
  const where = `${s.path}${s.part ? ", " + s.part : ""}, lines ${s.line_start}–${s.line_end}`;
  const badges = el("p", {class: "badges"});
  if (s.status) badges.append(el("span", {class: `badge ${s.status.state}`, title: s.status.summary}, s.status.state));
  badges.append(el("span", {class: `badge ${s.check}`}, s.check));
  const lines = el("pre", {class: "lines"});
  s.lines.forEach((text, i) => {
    const number = s.first + i;
    const cited = number >= s.line_start && number <= s.line_end;
    lines.append(el("span", {class: cited ? "line cited" : "line", "data-line": number},
                    el("span", {class: "no"}, String(number).padStart(4) + " "), el("span", {class: "text"}, text)), "\n");
  });
  const link = /^https?:\/\//i.test(s.url) ? el("a", {href: s.url, rel: "noopener noreferrer"}, s.url) : el("span", {}, s.url);
  return el("div", {class: "snippet"}, el("p", {class: "path"}, where), el("p", {class: "small"}, link), badges, lines);
}

// --- progress of a report being written --------------------------------------------------------
async function watch(run, box) {
  let next = 0;
  for (;;) {
    const status = await api(`/api/reports/${encodeURIComponent(run)}?since=${next}`);
    for (const line of status.events) box.append(line + "\n");
    next = status.next;
    if (status.state === "done") { location.href = `/report/${encodeURIComponent(run)}`; return; }
    if (status.state === "failed") { box.append(`failed: ${status.error}\n`); return; }
    await new Promise((resolve) => setTimeout(resolve, 700));
  }
}
const watched = document.querySelector("[data-watch]");
if (watched) watch(watched.dataset.watch, watched);

const newReport = document.getElementById("new-report");
if (newReport) newReport.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(newReport), box = document.getElementById("progress");
  box.hidden = false;
  box.textContent = "";
  try {
    const {run_id} = await api("/api/reports", {method: "POST", headers: {"content-type": "application/json"},
      body: JSON.stringify({topic: form.get("topic"), writer: form.get("writer"),
                            source: form.get("source") || "corpus"})});
    await watch(run_id, box);
  } catch (err) { box.append(err.message); }
});

// --- ask, streamed: the answer at the top as soon as it is known; how it was found, folded, below ----
const askForm = document.getElementById("ask");
const history = [];
if (askForm) askForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(askForm);
  const answer = el("div", {class: "answer pending"}, el("p", {class: "muted"}, "Looking for the answer…"));
  const hops = el("ol", {class: "hops"});
  const summary = el("summary", {}, "How it was found");
  const turn = el("div", {class: "turn"}, el("p", {class: "question"}, form.get("question")), answer,
                  el("details", {class: "how"}, summary, hops));
  document.getElementById("dialogue").prepend(turn);
  const said = new Set();
  const note = (text, cls) => {  // one line of the trace, never the same line twice in one answer
    if (!text || said.has(text)) return null;
    said.add(text);
    const item = el("li", {class: `hop ${cls || ""}`.trim()}, text);
    hops.append(item);
    summary.textContent = `How it was found (${hops.children.length} steps)`;
    return item;
  };
  const reply = await fetch("/api/ask", {method: "POST",
    headers: {"content-type": "application/json", accept: "text/event-stream"},
    body: JSON.stringify({collection: askForm.dataset.collection, question: form.get("question"),
                          strategy: form.get("strategy"), source: form.get("source") || "corpus", history})});
  if (!reply.ok) { answer.replaceChildren(el("p", {class: "error"}, (await reply.json()).error)); return; }
  const reader = reply.body.getReader(), decoder = new TextDecoder();
  const searches = new Map();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const chunk = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = chunk.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      if (data) showEvent(JSON.parse(data), {answer, note, searches});
    }
  }
  hops.dataset.done = "true";  // the trace is complete: the stream has ended
  if (answer.classList.contains("pending")) answer.replaceChildren(el("p", {class: "error"}, "No answer came back."));
  askForm.elements.question.value = "";
});

const STRATEGY_WORDS = {chain: "one search at a time, each built on the last", deep: "several searches at once",
                        naive: "a single search"};

// Each event said as a reader would say it; internal steps with nothing to tell a reader say nothing.
function showEvent(e, {answer, note, searches}) {
  if (e.event === "search") {
    const item = note(`Searched for “${e.query}”`, "search");
    if (item) searches.set(e.query, item);
  } else if (e.event === "found") {
    const item = searches.get(e.query);
    const found = e.count === 1 ? "found 1 passage" : `found ${e.count} passages`;
    const where = e.titles && e.titles.length ? ` (${e.titles.join("; ")})` : "";
    if (item) item.textContent = `Searched for “${e.query}” — ${found}${where}`;
    for (const line of e.replaced || []) note(line, "replaced");
  } else if (e.event === "step") {
    const out = e.output || {};
    if (e.step === "multihop.route" && out.strategy) note(`Chose to answer with ${STRATEGY_WORDS[out.strategy] || out.strategy}`);
    else if (e.step === "answer.rewrite" && out.standalone) note(`Read the question as: ${out.standalone}`);
    else if (e.step === "multihop.chain.intermediate_answer" && out.answer)
      note(/^no relevant information/i.test(out.answer) ? "Those passages did not answer it; searching again"
                                                        : `Learned: ${out.answer}`);
    else if (e.step === "multihop.chain.sufficiency" && out.sufficient === true) note("That is enough to answer");
  } else if (e.event === "error") {
    answer.classList.remove("pending");
    answer.replaceChildren(el("p", {class: "error"}, e.error));
  } else if (e.event === "answer") {
    history.push(e.turn);
    showAnswer(e, answer);
    for (const c of e.citations || []) {  // what the evidence graph says of the sources the answer rests on
      if (c.status && c.status.state !== "current") note(`[${c.n}] ${c.title}: ${c.status.summary}`, "replaced");
    }
  }
}

function showAnswer(e, box) {
  box.classList.remove("pending");
  const head = e.abstained ? el("p", {class: "short abstained"}, "No answer: ", e.abstain_reason || "the sources do not say")
                           : el("p", {class: "short"}, `${e.short_answer || e.answer}`);
  const confidence = e.abstained ? "abstained" : `confidence ${Number(e.confidence || 0).toFixed(2)}`;
  const cites = el("ul", {class: "citations"});
  for (const c of e.citations || []) {
    const state = c.status ? c.status.state : "";
    cites.append(el("li", {}, `[${c.n}] ${c.title} — ${c.path}:${c.line_start}-${c.line_end} `,
                    state ? el("span", {class: `badge ${state}`}, state) : ""));
  }
  box.replaceChildren(head, el("p", {class: "small confidence"}, confidence +
                      (e.question !== e.asked ? ` · read as: ${e.question}` : "")), cites,
                      el("p", {class: "full"}, e.answer));
}

// --- the evidence graph, drawn (cytoscape, vendored in static/vendor: nothing is fetched at run time) -----
const canvas = document.getElementById("graph-canvas");
const STATE_COLOURS = {current: "#12b76a", superseded: "#d92d20", amended: "#f79009",
                       "partly superseded": "#fdb022", "partly amended": "#fec84b"};
const EDGE_COLOURS = {supersedes: "#d92d20", amends: "#f79009", refers_to: "#98a2b3", attaches_to: "#2e90fa"};
if (canvas && window.cytoscape) (async () => {
  let drawing;
  try { drawing = await api("/api/graph/drawing"); }
  catch (err) { canvas.replaceChildren(el("p", {class: "error"}, err.message)); return; }
  const label = (t) => (t.length > 38 ? t.slice(0, 36) + "…" : t);
  const cy = window.cytoscape({
    container: canvas,
    elements: [
      ...drawing.nodes.map((n) => ({data: {id: n.id, label: label(n.title), state: n.state,
                                           colour: STATE_COLOURS[n.state] || "#667085"}})),
      ...drawing.edges.map((e, i) => ({data: {id: `e${i}`, source: e.source, target: e.target, type: e.type,
                                              label: e.type.replace("_", " "), colour: EDGE_COLOURS[e.type] || "#98a2b3"}})),
    ],
    style: [
      {selector: "node", style: {"background-color": "data(colour)", label: "data(label)", "font-size": 12,
        "text-wrap": "wrap", "text-max-width": 140, "text-valign": "bottom", "text-margin-y": 4, width: 22, height: 22}},
      {selector: "node.focus", style: {"border-width": 4, "border-color": "#1d2b44"}},
      {selector: "edge", style: {"line-color": "data(colour)", "target-arrow-color": "data(colour)",
        "target-arrow-shape": "triangle", "curve-style": "bezier", width: 1.5}},
      // only the edges that change what is in force are named on the drawing; the rest read by colour
      {selector: 'edge[type = "supersedes"], edge[type = "amends"]', style: {width: 3, label: "data(label)",
        "font-size": 10, "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.8,
        color: "data(colour)"}},
    ],
    // labels count in the layout, so titles do not overlap; a small graph is not blown up to fill the box
    layout: {name: "cose", animate: false, nodeDimensionsIncludeLabels: true, nodeRepulsion: () => 400000,
             idealEdgeLength: () => 90, gravity: 0.5, padding: 20, randomize: false},
    maxZoom: 1.3, minZoom: 0.2, wheelSensitivity: 0.3,
  });
  if (canvas.dataset.focus) cy.getElementById(canvas.dataset.focus).addClass("focus");
  cy.on("tap", "node", (event) => { location.href = `/graph?node=${encodeURIComponent(event.target.id())}`; });
  canvas.dataset.drawn = String(drawing.nodes.length);  // tests and screenshots wait for this
})();

// --- interviews ------------------------------------------------------------------------------------
const interviewForm = document.getElementById("interview");
if (interviewForm) interviewForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(interviewForm), box = document.getElementById("answers");
  const wait = el("p", {class: "muted"}, "asking…");
  box.prepend(wait);
  try {
    const answers = await api("/api/interview", {method: "POST", headers: {"content-type": "application/json"},
      body: JSON.stringify({run_id: interviewForm.dataset.run, question: form.get("question"), persona: form.get("persona")})});
    wait.replaceWith(...answers.map((a) => el("div", {class: "answer"}, el("p", {class: "question"}, `${a.persona}, asked: ${a.question}`),
      el("p", {}, a.answer), el("ul", {class: "citations"}, ...a.cited.map((c) =>
        el("li", {}, `[${c.n}] ${c.title} — ${c.path}:${c.line_start}-${c.line_end}`))))));
  } catch (err) { wait.replaceWith(el("p", {class: "error"}, err.message)); }
});
