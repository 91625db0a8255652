// A run page (/run/<id>), the page's module: the summary, the learning curves, the Mind
// Inspector, the Q-table and the message flow; it starts the panels of world.js (which follows
// the inspector and drives it), search.js (whose hits move the inspector) and joint.js.
import {damageText, el, fmt, getJSON, messageText, playedText, shortName, tidyJSON} from "./common.js";
import {CurvePanel, drawPlanValues, drawQGrid, drawRunCharts, drawSequence} from "./charts.js";
import {startJoint} from "./joint.js";
import {API, RUN} from "./runapi.js";
import {startSearch} from "./search.js";
import {controlAvailable, post} from "./token.js";
import {startWorld, worldOnMind} from "./world.js";

const state = {run: null, agent: null, position: 0, previous: -1, pending: null, curves: null, kinds: {}};

function renderSummary(run) {
  document.title = "bdi-rl " + run.run;
  document.getElementById("run-title").textContent = run.run;
  document.getElementById("live").hidden = !run.live;
  const ended = document.getElementById("state");  // interrupted, failed, abandoned: say so
  ended.hidden = run.live || run.state === "finished";
  ended.textContent = run.state;
  ended.title = run.state_why;
  ended.className = "badge state-" + run.state;
  const indexing = document.getElementById("indexing");
  indexing.hidden = run.indexing === null;
  indexing.textContent = run.indexing === null ? "" : "indexing " + Math.floor(run.indexing * 100) + " %";
  const rows = Object.entries(run.agents).map(([jid, a]) => {
    const last = a.evals.length ? a.evals[a.evals.length - 1] : null;
    return el("tr", {}, el("td", {}, shortName(jid)), el("td", {}, a.episodes.length),
      el("td", {}, a.events), el("td", {}, last ? fmt(last.mean_return) : "-"),
      el("td", {}, last ? fmt(last.success_rate) : "-"), el("td", {}, a.stopped ? "ended" : "running"));
  });
  const table = el("table", {id: "agents"},
    el("thead", {}, el("tr", {}, ...["agent", "episodes", "events", "eval mean return", "eval success", "state"].map(t => el("th", {}, t)))),
    el("tbody", {}, ...rows));
  document.getElementById("summary").replaceChildren(
    el("p", {}, (run.env || "?") + " · " + (run.experiment || "?") + " · " + run.events + " events"), table);
  const played = document.getElementById("evaluation");  // a play: what it measured, with CIs
  played.hidden = !run.evaluation;
  played.textContent = run.evaluation ? "Evaluation (bdi-rl play): " + playedText(run.evaluation) : "";
  showResume(run);
  const damaged = document.getElementById("damaged");  // what is shown was read around it
  damaged.hidden = !run.damaged;
  damaged.textContent = run.damaged ? damageText(run.damaged) : "";
}

// The learning curves (charts.js): fetched from /api/curves again at each refresh of a live
// run. A failure there is logged and leaves the rest of the page working.
function renderCharts() {
  state.curves = state.curves || new CurvePanel("runs=" + encodeURIComponent(RUN) + "&across=agents", drawRunCharts);
  return state.curves.refresh().catch(error => console.error("learning curves: " + error.message));
}

function renderAgents(run) {
  const select = document.getElementById("agent");
  const names = Object.keys(run.agents);
  if (select.options.length !== names.length) {
    select.replaceChildren(...names.map(jid => el("option", {value: jid}, shortName(jid))));
    const first = names.find(j => run.agents[j].episodes.length) || names[0];
    if (first && !state.agent) { select.value = first; state.agent = first; }
  }
  if (state.agent) {
    const slider = document.getElementById("slider");
    slider.max = String(Math.max(0, run.agents[state.agent].events - 1));
    document.getElementById("position").max = slider.max;
  }
}

function renderMind(mind) {
  // An agent without an env (a coordinator) has no episodes and no steps: say so, not "episode 0".
  const agent = state.run && state.run.agents[mind.agent];
  const clock = agent && agent.episodes.length === 0 && !mind.rl
    ? " · no env (no episodes)" : " · episode " + fmt(mind.episode) + ", step " + fmt(mind.step);
  document.getElementById("where").textContent = "event " + mind.position + " of " + mind.events + clock;
  const ev = mind.event;
  document.getElementById("event").textContent = ev.kind + "\n" + tidyJSON(ev.data, 1);
  renderIntentions(mind);
  // Why each running plan chosen by learned value runs (a plan.choice in words: readers/explain.py).
  document.getElementById("plan-why").replaceChildren(...(mind.plan_choices || []).map(c =>
    el("p", {class: "plan-why" + (c.exploring ? " explored" : "")}, c.why)));
  renderReasoning(mind.cycle);
  renderOptions(mind.options);
  document.getElementById("belief-count").textContent = "(" + mind.beliefs.length + ")";
  document.getElementById("beliefs").replaceChildren(...mind.beliefs.map(b =>
    el("li", {class: b.new ? "new" : ""}, el("code", {}, b.belief),
      el("span", {class: "source"}, (b.sources.length > 1 ? "sources " : "source ") + b.sources.map(shortName).join(", ")))));
  document.getElementById("mind-notes").replaceChildren(...(mind.notes || []).map(n => el("p", {class: "note"}, n)));
  document.getElementById("removed").replaceChildren(...mind.removed.map(b => el("li", {}, el("code", {}, b))));
  const rl = mind.rl;
  const box = document.getElementById("rl");
  if (!rl) { box.replaceChildren(el("p", {}, "no Q-learning step yet (step-level trace only)")); }
  else {
    const q = rl.q || [], choice = mind.choice || {};
    const labels = choice.labels || q.map((v, a) => "a" + a);
    const row = el("tr", {}, ...q.map((v, a) => el("td", {class: a === rl.a ? "chosen" : ""}, fmt(v))));
    box.replaceChildren(
      el("p", {id: "why", class: choice.explored ? "explored" : ""}, choice.why || ""),
      el("p", {}, "state " + rl.s + " → " + (choice.action || "action " + rl.a) + " → state " + rl.s2 + ", reward " + fmt(rl.r)),
      el("p", {}, "epsilon " + fmt(rl.epsilon) + " · Q(s,a) " + fmt(rl.q_before) + " → " + fmt(rl.q_after)),
      q.length ? el("table", {class: "qrow"}, el("thead", {}, el("tr", {}, ...labels.map(t => el("th", {}, t)))), el("tbody", {}, row)) : "");
  }
  document.getElementById("change-count").textContent = "(" + mind.changes.length + " events)";
  // Numbered by the agent's event position, as the slider counts (not seq: format 2 expands
  // the events of one trace line, which share its seq).
  document.getElementById("changes").replaceChildren(...mind.changes.map(e =>
    el("li", {value: String(e.position)}, el("b", {}, e.kind), " ", el("code", {}, describe(e)))));
  document.getElementById("mind-messages").replaceChildren(...mind.messages.map(m =>
    el("li", {}, viewOf(m.kind) === "sent" ? "→ " + shortName(m.to) : "← " + shortName(m.from), " ",
       el("b", {}, m.performative), " ", el("code", {}, messageText(m, 240)), m.rejected ? " (rejected: " + m.rejected + ")" : "")));
  worldOnMind(mind);  // world.js: the map follows the inspector
}

// The file of a plan as the page shows it: its name (the full path is the title).
function baseName(path) { return String(path).split(/[\\/]/).pop(); }

function where(file, line) {
  return el("span", {class: "where", title: file + ":" + line}, baseName(file) + ":" + line);
}

// Cycle-level traces record every intention's stack of intended means (Jason's view: the
// innermost, about to run, first); other traces only which plans run, oldest first.
function renderIntentions(mind) {
  const stacks = document.getElementById("stacks"), flat = document.getElementById("running-plans");
  const hasStacks = Array.isArray(mind.stacks);
  stacks.hidden = !hasStacks;
  flat.hidden = hasStacks;
  flat.replaceChildren(...(hasStacks ? [] : mind.intentions.map(i =>
    el("li", {}, el("b", {}, "@" + i.plan), " for ", el("code", {}, i.trigger),
       i.source && i.source !== "self" ? " (asked by " + shortName(i.source) + ")" : ""))));
  if (!hasStacks) { stacks.replaceChildren(); return; }
  if (!mind.stacks.length) { stacks.replaceChildren(el("p", {class: "none"}, "no intentions")); return; }
  stacks.replaceChildren(...mind.stacks.map(i => el("div", {class: "stack", "data-state": i.state},
    el("p", {class: "stack-head"}, "intention " + i.id + " ", el("span", {class: "state"}, i.state),
       " · " + i.means.length + " intended means"),
    el("ol", {class: "means", reversed: ""}, ...i.means.slice().reverse().map(m =>
      el("li", {}, el("b", {}, "@" + m.plan), " ", el("code", {}, m.trigger), " ", where(m.file, m.line)))))));
}

function triggerItems(triggers) {
  if (triggers === undefined || triggers === null) return [el("li", {class: "none"}, "not recorded")];
  if (!triggers.length) return [el("li", {class: "none"}, "none")];
  return triggers.map(t => el("li", {}, el("code", {}, t)));
}

// The latest reasoning cycle up to this position: what it ran, the events it took, and
// those still waiting.
function renderReasoning(cycle) {
  document.getElementById("reasoning-panel").hidden = !cycle;
  if (!cycle) return;
  document.getElementById("cycle-number").textContent = "(cycle " + cycle.n + ")";
  document.getElementById("cycle-ran").textContent = (cycle.plan
    ? "running @" + cycle.plan + (cycle.line === null || cycle.line === undefined ? "" : " at line " + cycle.line) +
      ", stack depth " + cycle.depth
    : "no current intention") + " · " + cycle.intentions + (cycle.intentions === 1 ? " intention" : " intentions");
  document.getElementById("events-taken").replaceChildren(...triggerItems(cycle.events));
  document.getElementById("events-pending").replaceChildren(...triggerItems(cycle.pending));
}

function planList(labels, selected) {
  if (!labels.length) return [el("span", {class: "none"}, "none")];
  return labels.map(p => el("span", {class: p === selected ? "plan selected" : "plan"}, "@" + p));
}

// The latest plan selection up to this position (Jason's options): the plans whose trigger
// matches the event, those whose context holds too, and the one chosen.
function renderOptions(options) {
  document.getElementById("options-panel").hidden = !options;
  if (!options) return;
  document.getElementById("options-event").textContent = options.event;
  document.getElementById("options-relevant").replaceChildren(...planList(options.relevant, options.selected));
  document.getElementById("options-applicable").replaceChildren(...planList(options.applicable, options.selected));
  document.getElementById("options-selected").replaceChildren(options.selected === null || options.selected === undefined
    ? el("span", {class: "none"}, "none (no applicable plan)")
    : el("span", {class: "plan selected"}, "@" + options.selected));
}

function stackLine(i) {
  const means = i.means.slice().reverse();
  const top = means[0];
  return "#" + i.id + " " + i.state + ": " + (top
    ? means.map(m => "@" + m.plan).join(" ← ") + " (" + baseName(top.file) + ":" + top.line + ")"
    : "empty");
}

// One line for an event's data in the "since the previous position" list, by the view the
// server names for its kind (/api/kinds: the kinds are the trace module's, never written here).
const VIEWS = {
  "belief": d => d.belief + (d.source && d.source !== "self" ? " [" + shortName(d.source) + "]" : ""),
  "goal": d => "!" + d.goal + (d.source && d.source !== "self" ? " (asked by " + shortName(d.source) + ")" : ""),
  "intention-start": d => "@" + d.plan + " for " + d.trigger,
  "intention-end": d => "@" + d.plan + (d.error ? ": " + d.error : ""),
  "internal-action": d => d.name + "(" + (d.args || []).map(a => tidyJSON(a)).join(", ") + ")" + (d.result !== undefined ? " = " + tidyJSON(d.result) : ""),
  "rl-step": d => "s=" + d.s + " a=" + d.a + " r=" + d.r + " s'=" + d.s2 + " Q " + fmt(d.q_before) + " → " + fmt(d.q_after),
  "sent": d => "→ " + shortName(d.to) + " " + d.performative + " " + messageText(d, 120),
  "received": d => "← " + shortName(d.from) + " " + d.performative + " " + messageText(d, 120),
  "plan-options": d => d.event + ": relevant " + (d.relevant || []).map(p => "@" + p).join(" ") +
    "; applicable " + (d.applicable || []).map(p => "@" + p).join(" ") + "; selected " + (d.selected ? "@" + d.selected : "none"),
  "intention-stacks": d => (d.intentions || []).map(stackLine).join(" | ") || "no intentions",
  "reasoning-cycle": d => "cycle " + d.n + (d.plan ? ": @" + d.plan + (d.line !== null && d.line !== undefined ? " line " + d.line : "") : ": idle") +
    (d.events ? "; took " + (d.events.join(", ") || "nothing") : "") + (d.pending && d.pending.length ? "; pending " + d.pending.join(", ") : ""),
  "joint-step": d => "episode " + d.episode + " step " + d.step + ": " +
    d.agents.map((a, i) => a + " a" + d.actions[i] + " → " + fmt(d.rewards[i])).join(", ") +
    (d.defaulted ? " (defaulted: " + d.defaulted.join(", ") + ")" : "") + (d.done ? " · done" : ""),
  "plan-choice": d => d.goal + " in " + (d.state || "no state") + ": " +
    d.options.map((p, i) => (p === d.chosen ? "→ " : "") + "@" + p + " " + fmt(d.values[i])).join(", ") +
    (d.exploring ? " (exploring)" : " (greedy)"),
  "plan-value": d => "@" + d.plan + " " + d.outcome + " after " + d.steps + " steps, reward " + fmt(d.reward) +
    ": value " + fmt(d.before) + " → " + fmt(d.after) + " in " + (d.state || "no state"),
  "data": d => tidyJSON(d).slice(0, 200),
};

function viewOf(kind) { return (state.kinds[kind] || {}).view || "data"; }

function describe(e) {
  return (VIEWS[viewOf(e.kind)] || VIEWS.data)(e.data || {});
}

async function jumpTo(episode, step) {
  const url = API + "/agents/" + encodeURIComponent(state.agent) + "/mind?episode=" + episode +
              (step === "" ? "" : "&step=" + step);
  const response = await fetch(url);
  const body = await response.json();
  document.getElementById("jump-error").textContent = response.ok ? "" : body.error;
  if (response.ok) {
    setPosition(body.position);
    state.pending = {};
    renderMind(body);
  }
}

function setPosition(position) {
  document.getElementById("slider").value = String(position);
  document.getElementById("position").value = String(position);
  state.position = position;
}

async function showPosition(position) {
  const slider = document.getElementById("slider");
  position = Math.max(0, Math.min(Number(slider.max), Math.floor(position)));
  slider.value = String(position);
  document.getElementById("position").value = String(position);
  const previous = state.position === position ? position - 1 : state.position;
  state.position = position;
  const token = state.pending = {};
  const mind = await getJSON(API + "/agents/" + encodeURIComponent(state.agent) + "/mind?pos=" + position +
                             "&prev=" + Math.min(previous, position - 1));
  if (token === state.pending) renderMind(mind);
}

// The inspector on ``agent`` at its event ``position``, that event shown as the change (search.js's hits).
function inspectAt(agent, position) {
  if (agent !== state.agent) {
    state.agent = agent;
    document.getElementById("agent").value = agent;
    renderAgents(state.run);
    showQTable();
  }
  state.position = position;
  return showPosition(position);
}

// Messages the sequence diagram draws (the newest): more would be unreadable at this width.
const DIAGRAM_MESSAGES = 80;

function renderSequence() {
  if (!state.run || !state.messages) return;
  const canvas = document.getElementById("sequence");
  drawSequence(canvas, Object.keys(state.run.agents), state.messages.slice(-DIAGRAM_MESSAGES));
  canvas.parentElement.scrollTop = canvas.parentElement.scrollHeight;  // the newest in view
}

function messagesURL() {
  return API + "/messages" + (document.getElementById("hide-experience").checked ? "?hide=experience" : "");
}

function renderMessages(data) {
  state.messages = data.messages;
  renderSequence();
  const shown = data.messages.length;
  document.getElementById("message-total").textContent = data.total + " messages" +
    (data.total > shown ? " (the last " + shown + " in the table)" : "") +
    (shown > DIAGRAM_MESSAGES ? "; the diagram draws the last " + DIAGRAM_MESSAGES : "");
  const t0 = state.run && state.run.started ? state.run.started : 0;
  document.querySelector("#messages tbody").replaceChildren(...data.messages.map(m =>
    el("tr", {}, el("td", {}, fmt((m.ts || 0) - t0, 2)), el("td", {}, shortName(m.from)), el("td", {}, "→"),
       el("td", {}, shortName(m.to)), el("td", {}, m.performative), el("td", {}, el("code", {}, messageText(m, 240))))));
}

async function showQTable() {
  if (!state.agent) return;
  document.getElementById("qtable-agent").textContent = "of " + shortName(state.agent) + " (latest checkpoint)";
  const grid = await getJSON(API + "/agents/" + encodeURIComponent(state.agent) + "/qtable");
  const canvas = document.getElementById("qtable-canvas"), note = document.getElementById("qtable-note");
  const rows = document.getElementById("qtable-rows");
  rows.hidden = true;
  if (grid.error) {
    canvas.hidden = true; canvas.dataset.arrows = "0";
    note.textContent = grid.error;
    return;
  }
  if (grid.table) {  // no map to lay it on (a shared world's seat, Taxi ...): its numbers
    const t = grid.table;
    canvas.hidden = true; canvas.dataset.arrows = "0";
    note.textContent = t.why + ". " + t.states + " states x " + t.actions + " actions, " + t.updated +
      " updated; max Q " + fmt(t.max_q) + ", min Q " + fmt(t.min_q) +
      (t.rows.length ? (t.updated > t.rows.length ? "; the first " + t.rows.length + " updated states:" : ":") : ".");
    rows.replaceChildren(
      el("thead", {}, el("tr", {}, el("th", {}, "state"), ...t.action_names.map(a => el("th", {}, a)))),
      el("tbody", {}, ...t.rows.map(([s, q]) => {
        const best = Math.max(...q);
        return el("tr", {}, el("td", {}, String(s)),
          ...q.map(v => el("td", v === best ? {class: "greedy"} : {}, fmt(v))));
      })));
    rows.dataset.states = String(t.rows.length);
    rows.hidden = t.rows.length === 0;
    return;
  }
  canvas.hidden = false;
  const range = drawQGrid(canvas, grid);
  note.textContent = "max Q per cell from " + fmt(range.lo) + " (dark) to " + fmt(range.hi) +
    " (yellow); dots mark the greedy move; grey: never updated.";
}

async function refresh() {
  const run = state.run = await getJSON(API);
  renderSummary(run); renderAgents(run);
  await renderCharts();
  drawPlanValues(run);
  renderMessages(await getJSON(messagesURL()));
  return run;
}

async function start() {
  state.kinds = (await getJSON("/api/kinds")).kinds;
  const run = await refresh();
  document.getElementById("agent").addEventListener("change", e => {
    state.agent = e.target.value; state.position = 0; renderAgents(state.run); showPosition(0); showQTable();
  });
  document.getElementById("slider").addEventListener("input", e => showPosition(Number(e.target.value)));
  document.getElementById("position").addEventListener("change", e => showPosition(Number(e.target.value)));
  document.getElementById("prev").addEventListener("click", () => showPosition(state.position - 1));
  document.getElementById("hide-experience").addEventListener("change", async () =>
    renderMessages(await getJSON(messagesURL())));
  document.getElementById("jump").addEventListener("submit", e => {
    e.preventDefault();
    jumpTo(document.getElementById("jump-episode").value, document.getElementById("jump-step").value);
  });
  document.getElementById("next").addEventListener("click", () => showPosition(state.position + 1));
  if (state.agent) await Promise.all([showPosition(0), showQTable()]);
  if (run.live || run.indexing !== null) {  // follow the run (or the index) as it grows
    const source = new EventSource(API + "/live");
    source.addEventListener("update", async e => {
      const info = JSON.parse(e.data);
      await refresh();
      if (!info.live && info.indexing === null) { source.close(); showQTable(); }
    });
  }
  document.body.dataset.ready = "1";
}
start();

// Resume (bdi-rl serve only, with its token): a stopped, interrupted or abandoned run goes
// on from its latest checkpoints as `bdi-rl run --resume` does (an evaluation is played again instead).
let controlled = null;
async function showResume(run) {
  if (controlled === null) controlled = await controlAvailable();
  const resumable = controlled && !run.evaluation && (run.state === "interrupted" || run.state === "abandoned");
  document.getElementById("resume-box").hidden = !resumable && !document.getElementById("resume-result").textContent;
  document.getElementById("resume").disabled = !resumable;
}

document.getElementById("resume").addEventListener("click", async () => {
  const line = document.getElementById("resume-result");
  try {
    const data = await post("/api/control/runs/" + encodeURIComponent(RUN) + "/resume");
    line.textContent = "queued as job " + data.jobs[0].id + " (the control page shows it)";
    line.className = "ok";
  } catch (e) { line.textContent = e.message; line.className = "error"; }
});

// The panels: the world player moves the inspector, and so does a search hit.
startWorld(showPosition);
startSearch(inspectAt);
startJoint().catch(e => console.error("joint actions: " + e.message));
