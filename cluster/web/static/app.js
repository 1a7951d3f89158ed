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
    const panel = document.getElementById("source"), body = document.getElementById("source-body");
    panel.hidden = false;
    body.replaceChildren("loading…");
    try {
      const src = await api(`/api/reports/${encodeURIComponent(run)}/source/${cite.dataset.n}`);
      document.getElementById("source-title").textContent = `[${src.n}] ${src.title}`;
      body.replaceChildren(...src.snippets.map(showSnippet));
    } catch (err) {
      body.replaceChildren(el("p", {class: "error"}, err.message));
    }
  });
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
      body: JSON.stringify({topic: form.get("topic"), writer: form.get("writer")})});
    await watch(run_id, box);
  } catch (err) { box.append(err.message); }
});

// --- ask, streamed -------------------------------------------------------------------------------
const askForm = document.getElementById("ask");
const history = [];
if (askForm) askForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(askForm);
  const turn = el("div", {class: "turn"}, el("p", {class: "question"}, form.get("question")));
  const hops = el("ol", {class: "hops"});
  turn.append(hops);
  document.getElementById("dialogue").prepend(turn);
  const reply = await fetch("/api/ask", {method: "POST",
    headers: {"content-type": "application/json", accept: "text/event-stream"},
    body: JSON.stringify({collection: askForm.dataset.collection, question: form.get("question"),
                          strategy: form.get("strategy"), history})});
  if (!reply.ok) { turn.append(el("p", {class: "error"}, (await reply.json()).error)); return; }
  const reader = reply.body.getReader(), decoder = new TextDecoder();
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
      if (data) showEvent(JSON.parse(data), turn, hops);
    }
  }
  askForm.elements.question.value = "";
});

function showEvent(e, turn, hops) {
  if (e.event === "search") hops.append(el("li", {class: "hop"}, "search: ", e.query));
  else if (e.event === "step") {
    const said = Object.values(e.output).filter((v) => typeof v === "string" && v).join(" · ").slice(0, 240);
    if (said) hops.append(el("li", {class: "hop step"}, `${e.step}: `, said));  // steps with something to show
  }
  else if (e.event === "error") turn.append(el("p", {class: "error"}, e.error));
  else if (e.event === "answer") {
    history.push(e.turn);
    const head = e.abstained ? `Cannot answer: ${e.abstain_reason}` : `${e.short_answer || e.answer}`;
    const answer = el("div", {class: "answer"}, el("p", {class: "short"}, head),
      el("p", {class: "small"}, `confidence ${Number(e.confidence || 0).toFixed(2)}` +
        (e.question !== e.asked ? ` · read as: ${e.question}` : "")),
      el("p", {}, e.answer));
    const cites = el("ul", {class: "citations"});
    for (const c of e.citations || []) {
      const state = c.status ? c.status.state : "";
      cites.append(el("li", {}, `[${c.n}] ${c.title} — ${c.path}:${c.line_start}-${c.line_end} `,
                      state ? el("span", {class: `badge ${state}`}, state) : ""));
    }
    answer.append(cites);
    turn.append(answer);
  }
}

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
