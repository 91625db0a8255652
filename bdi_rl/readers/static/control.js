// The control page (bdi-rl serve): start runs and seed sweeps, watch the queue, stop jobs.
// The token (token.js) is kept in sessionStorage and sent in a header with every POST; the DOM
// is built with text nodes only (common.js).
import {el, getJSON} from "./common.js";
import {post, takeToken} from "./token.js";

const shipped = new Map();  // spec name -> its TOML text, as the server ships it

const token = takeToken();
document.getElementById("no-token").hidden = Boolean(token);

function say(text, ok) {
  const line = document.getElementById("start-result");
  line.textContent = text;
  line.className = ok ? "ok" : "error";
}

const groupsOf = new Map();  // shipped spec name -> its learner groups
const warmStarts = [];  // {group, run, agent}: what each group starts from (by run id and agent)

async function loadSpecs() {
  const data = await getJSON("/api/control/specs");
  const select = document.getElementById("spec-name");
  for (const spec of data.specs) {
    shipped.set(spec.name, spec.toml);
    groupsOf.set(spec.name, spec.learner_groups || []);
    select.append(el("option", {value: spec.name}, spec.name));
  }
  select.append(el("option", {value: ""}, "(your own: paste it below)"));
  document.getElementById("sweep-size").max = String(data.max_sweep);
  document.getElementById("seed").max = String(data.max_seed);
  const first = shipped.has("frozenlake-4x4") ? "frozenlake-4x4" : (data.specs[0] || {}).name || "";
  select.value = first;
  showSpec();
  select.addEventListener("change", showSpec);
}

function showSpec() {
  const name = document.getElementById("spec-name").value;
  document.getElementById("spec-text").value = name ? shipped.get(name) : "";
  const groups = document.getElementById("warm-group");
  groups.replaceChildren(el("option", {value: ""}, "every learner group"),
    ...(groupsOf.get(name) || []).map(g => el("option", {value: g}, g)));
}

// The library's usable checkpoints, by env, for the warm-start picker.
async function loadCheckpoints() {
  const data = await getJSON("/api/library");
  const select = document.getElementById("warm-checkpoint");
  const groups = new Map();
  for (const entry of data.entries) {
    if (!entry.verified) continue;
    if (!groups.has(entry.group)) groups.set(entry.group, el("optgroup", {label: entry.group}));
    const episodes = entry.total_episodes === null ? "?" : entry.total_episodes;
    groups.get(entry.group).append(el("option", {value: entry.key, "data-run": entry.run, "data-agent": entry.agent},
      entry.run + " / " + entry.agent + " (" + episodes + " episodes)"));
  }
  select.replaceChildren(el("option", {value: ""}, "a checkpoint of the library …"), ...groups.values());
}

function showWarmStarts() {
  document.getElementById("warm-starts").replaceChildren(...warmStarts.map((w, k) => {
    const drop = el("button", {type: "button", class: "drop"}, "remove");
    drop.addEventListener("click", () => { warmStarts.splice(k, 1); showWarmStarts(); });
    return el("li", {"data-run": w.run, "data-agent": w.agent || ""},
      (w.group || "every learner group") + " from " + w.run + " / " + (w.agent || "each agent's own table") + " ", drop);
  }));
}

function addWarmStart() {
  const option = document.getElementById("warm-checkpoint").selectedOptions[0];
  if (!option || !option.value) { say("pick a checkpoint to warm-start from", false); return; }
  const group = document.getElementById("warm-group").value || null;
  const others = warmStarts.filter(w => w.group !== group);
  warmStarts.splice(0, warmStarts.length, ...others, {group, run: option.dataset.run, agent: option.dataset.agent});
  showWarmStarts();
}

// "warm start a new run from this" on the library page: /control?warm_run=RUN&warm_agent=AGENT
function takeWarmStartFromUrl() {
  const query = new URLSearchParams(location.search);
  const run = query.get("warm_run");
  if (run) warmStarts.push({group: null, run, agent: query.get("warm_agent") || null});
  showWarmStarts();
}

// What to start: a shipped spec by name while its text is untouched, else the text itself.
function startBody() {
  const name = document.getElementById("spec-name").value;
  const text = document.getElementById("spec-text").value;
  const body = name && shipped.get(name) === text ? {spec: name} : {toml: text};
  for (const key of ["seed", "episodes"]) {
    const value = document.getElementById(key).value.trim();
    if (value !== "") body[key] = Number(value);
  }
  const trace = document.getElementById("trace").value;
  if (trace) body.trace = trace;
  if (warmStarts.length) body.warm_start = warmStarts.map(w => ({group: w.group, run: w.run, agent: w.agent}));
  return body;
}

async function startRun() {
  try {
    const data = await post("/api/control/runs", startBody());
    say("queued job " + data.jobs.map(j => j.id).join(", "), true);
  } catch (e) { say(e.message, false); }
  refresh();
}

async function startSweep() {
  const body = startBody();
  const size = document.getElementById("sweep-size").value.trim();
  body.seeds = size === "" ? 1 : Number(size);
  const axes = document.getElementById("sweep-axes").value.trim();
  if (axes) body.axes = axes;
  const files = [...document.getElementById("sweep-plans").files];
  if (files.length) body.plans = Object.fromEntries(await Promise.all(files.map(async f => [f.name, await f.text()])));
  try {
    const data = await post("/api/control/sweeps", body);
    say("sweep " + data.sweep + ": jobs " + data.jobs.map(j => j.id).join(", "), true);
  } catch (e) { say(e.message, false); }
  refresh();
}

async function stopJob(id) {
  try {
    await post("/api/control/jobs/" + encodeURIComponent(id) + "/stop");
  } catch (e) { say("stop job " + id + ": " + e.message, false); }
  refresh();
}

function jobRows(job) {
  const runCell = job.run ? el("a", {href: "/run/" + encodeURIComponent(job.run)}, job.run) : "-";
  const sweepCell = job.sweep ? el("a", {href: "/compare?sweep=" + encodeURIComponent(job.sweep)}, job.sweep) : "-";
  let action = null;
  if ((job.state === "queued" || job.state === "running") && !job.stopping) {
    action = el("button", {type: "button", class: "stop", "data-job": String(job.id)}, "Stop");
    action.addEventListener("click", () => stopJob(job.id));
  }
  const row = el("tr", {"data-job": String(job.id), "data-state": job.state},
    el("td", {}, String(job.id)), el("td", {}, job.spec), el("td", {}, job.seed === null ? "-" : String(job.seed)),
    el("td", {}, job.episodes === null ? "spec's" : String(job.episodes)),
    el("td", {}, job.trace === null ? "spec's" : job.trace), el("td", {}, sweepCell),
    el("td", {class: "state"}, job.stopping ? "stopping" : job.state), el("td", {}, runCell),
    el("td", {}, job.exit_code === null ? "" : String(job.exit_code)), el("td", {}, action));
  if (!job.error) return [row];
  return [row, el("tr", {"data-error-of": String(job.id)}, el("td", {colspan: "10", class: "job-error"}, job.error))];
}

async function refresh() {
  try {
    const data = await getJSON("/api/control/jobs");
    const counts = {};
    for (const job of data.jobs) counts[job.state] = (counts[job.state] || 0) + 1;
    const parts = Object.entries(counts).map(([state, n]) => n + " " + state);
    document.getElementById("queue-summary").textContent =
      "at most " + data.max_running + " at once" + (parts.length ? " · " + parts.join(", ") : "");
    document.getElementById("queue-empty").hidden = data.jobs.length > 0;
    document.querySelector("#queue tbody").replaceChildren(...data.jobs.flatMap(jobRows));
    document.getElementById("status").textContent = "";
  } catch (e) {
    document.getElementById("status").textContent = "server unreachable: " + e.message;
  }
}

async function main() {
  document.getElementById("start-run").addEventListener("click", startRun);
  document.getElementById("start-sweep").addEventListener("click", startSweep);
  document.getElementById("warm-add").addEventListener("click", addWarmStart);
  await loadSpecs();
  takeWarmStartFromUrl();
  await Promise.all([refresh(), loadCheckpoints().catch(e => say("the checkpoint library: " + e.message, false))]);
  document.body.dataset.ready = "1";
  setInterval(refresh, 1000);
}

main();
