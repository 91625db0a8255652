// The checkpoint library: every Q-table checkpoint (and policy cache) of the runs directory,
// grouped by env and state space (tables of one group can warm-start each other's runs),
// sortable and searchable; under bdi-rl serve, play one or warm-start a new run from it.
// Checkpoints are named by run id and agent, never by a path. Text nodes only (common.js).
import {el, fmt, getJSON} from "./common.js";
import {controlAvailable, post} from "./token.js";

const state = {entries: [], sort: {key: "saved", descending: true}, control: false, jobs: new Map()};
const MAX_PLAYS_SHOWN = 3;

const COLUMNS = [
  {key: "run", label: "run", value: e => e.run},
  {key: "agent", label: "agent", value: e => e.agent},
  {key: "episodes", label: "episodes", title: "training episodes behind the table (over its warm starts)", value: e => e.total_episodes},
  {key: "epsilon", label: "epsilon", title: "exploration rate at save", value: e => e.epsilon},
  {key: "success", label: "final success", title: "the run's final greedy evaluation", value: e => e.evaluation ? e.evaluation.success_rate : null},
  {key: "return", label: "final return", value: e => e.evaluation ? e.evaluation.mean_return : null},
  {key: "saved", label: "saved", value: e => e.created},
  {key: "lineage", label: "warm start from", value: e => e.lineage ? (e.lineage.key || e.lineage.path) : ""},
  {key: "plays", label: "plays", title: "evaluations of this table (bdi-rl play)", value: e => e.plays.length},
  {key: "integrity", label: "integrity", value: e => e.integrity},
];

function cell(entry, key) {
  if (key === "run") {
    const link = el("a", {href: "/run/" + encodeURIComponent(entry.run)}, entry.run);
    return el("td", {}, link, entry.imported ? el("span", {class: "hint"}, " imported from " + (entry.made_by || "?")) : null,
      entry.run_state && entry.run_state !== "finished" ? el("span", {class: "badge state-" + entry.run_state}, entry.run_state) : null);
  }
  if (key === "episodes") {
    const here = entry.episodes !== entry.total_episodes && entry.episodes !== null ? " (" + entry.episodes + " here)" : "";
    return el("td", {class: "num"}, fmt(entry.total_episodes) + here);
  }
  if (key === "epsilon") return el("td", {class: "num"}, fmt(entry.epsilon));
  if (key === "success") return el("td", {class: "num"}, entry.evaluation ? fmt(entry.evaluation.success_rate) : "-");
  if (key === "return") return el("td", {class: "num"}, entry.evaluation ? fmt(entry.evaluation.mean_return) : "-");
  if (key === "saved") return el("td", {}, entry.created ? new Date(entry.created * 1000).toLocaleString() : "-");
  if (key === "lineage") {
    const origin = entry.lineage;
    if (!origin) return el("td", {}, "-");
    const where = origin.key ? el("a", {href: "/run/" + encodeURIComponent(origin.key.split("/")[0])}, origin.key) : origin.path;
    return el("td", {}, where, " (" + origin.episodes + " episodes; " + origin.status + ")");
  }
  if (key === "plays") {
    if (!entry.plays.length) return el("td", {}, "-");
    const older = entry.plays.length - MAX_PLAYS_SHOWN;
    return el("td", {}, older > 0 ? el("span", {class: "hint"}, older + " earlier; the last:") : null,
      el("ul", {class: "plays"}, ...entry.plays.slice(-MAX_PLAYS_SHOWN).map(p => el("li", {},
      el("a", {href: "/run/" + encodeURIComponent(p.run)}, p.run), ": " + p.episodes + " episodes, success " +
      fmt(p.success_rate) + " [" + (p.success_ci95 || []).map(v => fmt(v)).join(", ") + "]" +
      (p.task_change ? " · " + p.task_change : "") + (p.policy_only ? " · policy only" : "")))));
  }
  if (key === "integrity") {
    const policies = entry.policies ? (entry.policies.problem ? "; policy cache: " + entry.policies.problem
      : "; policy cache of " + entry.policies.goals.length + " goal(s)") : "";
    return el("td", {class: entry.verified ? "verified" : "unusable"}, entry.integrity + policies);
  }
  return el("td", {}, String(entry[key] ?? "-"));
}

function actions(entry) {
  if (!state.control || !entry.verified) return el("td", {});
  const play = el("button", {type: "button", class: "play"}, "play");
  play.addEventListener("click", () => startPlay(entry, {}));
  const playOn = el("button", {type: "button", class: "play-on"}, "play on …");
  playOn.addEventListener("click", () => togglePlayOn(entry));
  const warm = el("a", {class: "warm-start", href: "/control?warm_run=" + encodeURIComponent(entry.run) +
    "&warm_agent=" + encodeURIComponent(entry.agent)}, "warm start a new run from this");
  return el("td", {class: "actions"}, play, " ", playOn, " ", warm);
}

// "play on …": another seed, a moved goal, another slippery setting or map (the server
// refuses a map of another size in the one line --warm-start gives).
function playOnForm(entry) {
  const form = el("form", {class: "play-on-form controls"},
    el("label", {}, "seed ", el("input", {class: "seed", type: "number", min: "0", step: "1", placeholder: "run's"})),
    el("label", {}, "goal x ", el("input", {class: "goal-x", type: "number", min: "0", step: "1"})),
    el("label", {}, "y ", el("input", {class: "goal-y", type: "number", min: "0", step: "1"})),
    el("label", {}, "slippery ", el("select", {class: "slippery"}, el("option", {value: ""}, "as trained"),
      el("option", {value: "true"}, "yes"), el("option", {value: "false"}, "no"))),
    el("label", {}, "map ", el("select", {class: "map"}, el("option", {value: ""}, "as trained"),
      el("option", {value: "4x4"}, "4x4"), el("option", {value: "8x8"}, "8x8"))),
    el("button", {type: "submit"}, "play"));
  form.addEventListener("submit", event => {
    event.preventDefault();
    const value = cls => form.querySelector("." + cls).value.trim();
    const options = {};
    if (value("seed") !== "") options.seed = Number(value("seed"));
    if (value("goal-x") !== "" || value("goal-y") !== "") options.goal = [Number(value("goal-x")), Number(value("goal-y"))];
    if (value("slippery") !== "") options.is_slippery = value("slippery") === "true";
    if (value("map") !== "") options.map_name = value("map");
    startPlay(entry, options).then(queued => { if (queued) form.closest("tr").remove(); });
  });
  return form;
}

function togglePlayOn(entry) {
  const row = document.querySelector("tr[data-key='" + CSS.escape(entry.key) + "']");
  const next = row.nextElementSibling;
  if (next && next.classList.contains("play-on-row")) { next.remove(); return; }
  row.after(el("tr", {class: "play-on-row", "data-for": entry.key}, el("td", {colspan: String(COLUMNS.length + 1)}, playOnForm(entry))));
}

function say(text, ok) {
  const line = document.getElementById("play-result");
  line.textContent = text;
  line.className = ok ? "ok" : "error";
}

async function startPlay(entry, options) {
  const episodes = Number(document.getElementById("play-episodes").value || 100);
  const body = {run: entry.run, agent: entry.agent, episodes, policy_only: document.getElementById("play-policy-only").checked, ...options};
  try {
    const data = await post("/api/control/play", body);
    const job = data.jobs[0];
    state.jobs.set(job.id, job);
    say("queued job " + job.id + ": " + job.spec, true);
    showJobs();
    return true;
  } catch (e) { say(e.message, false); return false; }
}

function showJobs() {
  document.getElementById("my-jobs").replaceChildren(...[...state.jobs.values()].map(job =>
    el("li", {"data-job": String(job.id), "data-state": job.state}, "job " + job.id + " · " + job.spec + " · " + job.state,
      job.run ? el("span", {}, " · ", el("a", {href: "/run/" + encodeURIComponent(job.run)}, job.run)) : null,
      job.error ? el("span", {class: "error"}, " · " + job.error) : null)));
}

async function followJobs() {
  if (!state.jobs.size) return;
  const data = await getJSON("/api/control/jobs");
  for (const job of data.jobs) if (state.jobs.has(job.id)) state.jobs.set(job.id, job);
  showJobs();
}

function matches(entry, words) {
  const text = [entry.run, entry.agent, entry.group, entry.integrity, entry.made_by || "",
    entry.lineage ? (entry.lineage.key || entry.lineage.path) : ""].join(" ").toLowerCase();
  return words.every(w => text.includes(w));
}

function sortValue(entry) {
  const column = COLUMNS.find(c => c.key === state.sort.key);
  return column.value(entry);
}

function compare(a, b) {
  const x = sortValue(a), y = sortValue(b);
  if (x === y) return 0;
  if (x === null || x === undefined) return 1;  // unknowns last either way
  if (y === null || y === undefined) return -1;
  const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
  return state.sort.descending ? -order : order;
}

function header() {
  return el("thead", {}, el("tr", {}, ...COLUMNS.map(c => {
    const arrow = state.sort.key === c.key ? (state.sort.descending ? " ▼" : " ▲") : "";
    const th = el("th", {class: "sortable", "data-sort": c.key, title: c.title || "sort by " + c.label}, c.label + arrow);
    th.addEventListener("click", () => {
      state.sort = {key: c.key, descending: state.sort.key === c.key ? !state.sort.descending : c.key === "saved"};
      render();
    });
    return th;
  }), el("th", {}, "")));
}

function render() {
  const words = document.getElementById("find").value.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = state.entries.filter(e => matches(e, words));
  const groups = new Map();
  for (const entry of shown) {
    if (!groups.has(entry.group)) groups.set(entry.group, []);
    groups.get(entry.group).push(entry);
  }
  const sections = [...groups.keys()].sort().map(group => el("section", {class: "env-group", "data-group": group},
    el("h2", {}, group + " (" + groups.get(group).length + ")"),
    el("table", {class: "checkpoints"}, header(), el("tbody", {}, ...groups.get(group).sort(compare).map(entry =>
      el("tr", {"data-key": entry.key, "data-verified": entry.verified ? "1" : "0"},
        ...COLUMNS.map(c => cell(entry, c.key)), actions(entry)))))));
  document.getElementById("library").replaceChildren(...sections);
  document.getElementById("counts").textContent = shown.length + " of " + state.entries.length + " shown";
  document.getElementById("empty").hidden = state.entries.length > 0;
}

async function load() {
  const data = await getJSON("/api/library");
  state.entries = data.entries;
  document.getElementById("status").textContent = data.pending ? "verifying " + data.pending + " file(s) …" : "";
  if (!document.querySelector(".play-on-row")) render();  // a form being filled is kept
  return data.pending > 0;
}

async function loop() {
  let pending = true;
  try { pending = await load(); await followJobs(); }
  catch (e) { document.getElementById("status").textContent = "server unreachable: " + e.message; }
  setTimeout(loop, pending || state.jobs.size ? 1000 : 10000);
}

async function main() {
  state.control = await controlAvailable();
  document.getElementById("control-link").hidden = !state.control;
  document.getElementById("play-controls").hidden = !state.control;
  document.getElementById("read-only").hidden = state.control;
  document.getElementById("find").addEventListener("input", render);
  await loop();
  document.body.dataset.ready = "1";
}

main();
