// The joint-action panel of a run with a shared world (/api/runs/<run>/joint): which joint
// actions the agents played early and late in training, one episode's joint steps, and on a
// grid world every agent on the map at each of its steps. Text nodes and a canvas only (CSP).
// Each seat in the world panel's colour (world.js), as the video draws it too.
import {el, fmt, getJSON, shortName} from "./common.js";
import {API} from "./runapi.js";
import {JOINT_INK, JOINT_INK_NAMES} from "./world.js";

const JOINT = {summary: null, episode: null};

function jointTable(window, agents) {
  const head = el("tr", {}, el("th", {}, "joint action (" + agents.join(", ") + ")"), el("th", {}, "times"),
    el("th", {}, "rewards"));
  const rows = window.joint_actions.slice(0, 12).map(r => el("tr", {},
    el("td", {}, "(" + r.actions.join(", ") + ")"), el("td", {}, r.count), el("td", {}, r.rewards.map(x => fmt(x)).join(", "))));
  return [el("thead", {}, head), el("tbody", {}, ...rows)];
}

function spanText(window) {
  if (!window.episodes.length) return "";
  return "(episodes " + window.episodes[0] + "–" + window.episodes[1] + ", " + window.steps + " steps" +
    (window.defaulted ? ", " + window.defaulted + " defaulted" : "") + ")";
}

function renderJointSummary(summary) {
  document.getElementById("joint").hidden = false;
  document.getElementById("joint-world").textContent = "(" + shortName(summary.world) + ": " +
    summary.seats.map(s => s[0] + " = " + s[1]).join(", ") + ")";
  for (const part of ["first", "last"]) {
    document.getElementById("joint-" + part).replaceChildren(...jointTable(summary[part], summary.agents));
    document.getElementById("joint-" + part + "-span").textContent = spanText(summary[part]);
  }
}

function renderJointEpisode(data) {
  JOINT.episode = data;
  document.getElementById("joint-shown").textContent = data.episode;
  const agents = data.steps[0].agents;
  const head = el("tr", {}, el("th", {}, "step"), ...agents.map(a => el("th", {}, a)), el("th", {}, "rewards"),
    el("th", {}, ""));
  const rows = data.steps.map(s => el("tr", {}, el("td", {}, s.step),
    ...s.actions.map((a, i) => el("td", {}, "a" + a + (s.defaulted && s.defaulted.includes(s.agents[i]) ? " (default)" : ""))),
    el("td", {}, s.rewards.map(x => fmt(x)).join(", ")), el("td", {}, s.done ? "done" : "")));
  document.getElementById("joint-steps").replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
  const grid = data.steps.some(s => s.positions);
  document.getElementById("joint-map-panel").hidden = !grid;
  if (grid) {
    const slider = document.getElementById("joint-map-slider");
    slider.max = String(data.steps.length - 1);
    slider.value = "0";
    drawJointMap(0);
  }
}

// The grid (its size from the seats' positions, 5x5 at least), the food and every agent.
function drawJointMap(k) {
  const step = JOINT.episode.steps[k];
  const canvas = document.getElementById("joint-map");
  const ctx = canvas.getContext("2d");
  const map = JOINT.summary.map;  // the world agent's map; else as large as the positions need
  const size = map ? Math.max(map.rows, map.cols) : Math.max(5, ...step.positions.flat().map(v => v + 1));
  const cell = canvas.width / size;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.strokeStyle = "#ccc";
  for (let i = 0; i <= size; i++) {
    ctx.beginPath(); ctx.moveTo(i * cell, 0); ctx.lineTo(i * cell, size * cell); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(0, i * cell); ctx.lineTo(size * cell, i * cell); ctx.stroke();
  }
  for (const [x, y, level] of step.items || []) {
    ctx.fillStyle = "#8c8c00";
    ctx.fillRect(x * cell + cell * .2, y * cell + cell * .2, cell * .6, cell * .6);
    ctx.fillStyle = "#fff"; ctx.font = (cell * .35) + "px sans-serif"; ctx.textAlign = "center"; ctx.textBaseline = "middle";
    ctx.fillText(String(level), x * cell + cell / 2, y * cell + cell / 2);
  }
  const seats = JOINT.summary.seats;
  step.positions.forEach(([x, y], i) => {
    ctx.fillStyle = JOINT_INK[i % JOINT_INK.length];
    ctx.beginPath(); ctx.arc(x * cell + cell / 2, y * cell + cell / 2, cell * .3, 0, 2 * Math.PI); ctx.fill();
  });
  document.getElementById("joint-map-step").textContent = "(step " + step.step + " of " + JOINT.episode.steps.length + ")";
  document.getElementById("joint-map-legend").replaceChildren(...seats.map((s, i) => el("li", {},
    JOINT_INK_NAMES[i % JOINT_INK_NAMES.length] + ": " + s[1] + " (" + s[0] + ") at (" + step.positions[i].join(", ") +
    "), action a" + (step.actions[step.agents.indexOf(s[1])] ?? "-"))));
  const legend = document.getElementById("joint-map-legend");
  legend.append(el("li", {}, "olive squares: food, with its level"));
  canvas.dataset.agents = String(step.positions.length);
  canvas.dataset.items = String((step.items || []).length);
}

// The joint actions of a range of episodes the user chose (/joint?from=A&to=B).
async function showJointRange(first, last) {
  const error = document.getElementById("joint-range-error");
  error.textContent = "";
  if (Number(first) > Number(last)) { error.textContent = "episode " + first + " is after episode " + last; return; }
  const response = await fetch(API + "/joint?from=" + encodeURIComponent(first) + "&to=" + encodeURIComponent(last));
  const body = await response.json();
  if (!response.ok) { error.textContent = body.error; return; }
  document.getElementById("joint-range-panel").hidden = false;
  document.getElementById("joint-range").replaceChildren(...jointTable(body, JOINT.summary.agents));
  document.getElementById("joint-range-span").textContent = body.from + "–" + body.to + " " + spanText(body) +
    (body.cut ? " (cut: too many steps)" : "");
  document.getElementById("joint-range-panel").dataset.ready = body.from + "-" + body.to;
}

async function showJointEpisode(episode) {
  const error = document.getElementById("joint-error");
  error.textContent = "";
  try {
    renderJointEpisode(await getJSON(API + "/joint/" + encodeURIComponent(episode)));
  } catch {
    error.textContent = "no joint steps in episode " + episode + " (at trace level episode the world records none)";
  }
}

// The panel, if the run has a shared world (else it stays hidden).
export async function startJoint() {
  const summary = JOINT.summary = await getJSON(API + "/joint");
  if (summary.error) return;  // not a shared world: the section stays hidden
  renderJointSummary(summary);
  document.getElementById("joint-form").addEventListener("submit", e => {
    e.preventDefault();
    showJointEpisode(document.getElementById("joint-episode").value);
  });
  document.getElementById("joint-map-slider").addEventListener("input", e => drawJointMap(Number(e.target.value)));
  document.getElementById("joint-range-form").addEventListener("submit", e => {
    e.preventDefault();
    showJointRange(document.getElementById("joint-from").value, document.getElementById("joint-to").value)
      .catch(err => console.error("joint actions: " + err.message));
  });
  if (summary.episodes.length) {
    for (const id of ["joint-from", "joint-to", "joint-episode"]) document.getElementById(id).max = String(summary.episodes[1]);
    document.getElementById("joint-from").value = String(summary.episodes[0]);
    document.getElementById("joint-to").value = String(summary.episodes[1]);
  }
  const first = summary.first.episodes[0];
  if (first !== undefined) await showJointEpisode(first);
  document.getElementById("joint").dataset.ready = "1";
}
