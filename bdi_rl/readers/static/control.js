// The control page (bdi-rl serve): start runs and seed sweeps, watch the queue, stop jobs.
// The token comes in the URL's fragment (never sent to the server), is kept in sessionStorage
// and sent in a header with every POST; the DOM is built with text nodes only (common.js).
"use strict";

const TOKEN_KEY = "bdi-rl-token";
const shipped = new Map();  // spec name -> its TOML text, as the server ships it

function takeToken() {
  const found = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (found) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(found[1]));
    history.replaceState(null, "", location.pathname + location.search);  // out of sight and history
  }
  const token = sessionStorage.getItem(TOKEN_KEY);
  document.getElementById("no-token").hidden = Boolean(token);
  return token || "";
}

const token = takeToken();

// A state-changing request: the token, and an Origin header (the page's no-referrer policy
// would make it "null", which the server refuses; same-origin keeps it).
async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: {"Content-Type": "application/json", "X-BDI-RL-Token": token},
    body: JSON.stringify(body || {}),
    referrerPolicy: "same-origin",
    credentials: "same-origin",
  });
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) throw new Error((data && data.error) || (url + ": " + response.status));
  return data;
}

function say(text, ok) {
  const line = document.getElementById("start-result");
  line.textContent = text;
  line.className = ok ? "ok" : "error";
}

async function loadSpecs() {
  const data = await getJSON("/api/control/specs");
  const select = document.getElementById("spec-name");
  for (const spec of data.specs) {
    shipped.set(spec.name, spec.toml);
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
    el("td", {}, String(job.id)), el("td", {}, job.spec), el("td", {}, String(job.seed)),
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
  await loadSpecs();
  await refresh();
  document.body.dataset.ready = "1";
  setInterval(refresh, 1000);
}

main();
