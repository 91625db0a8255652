// The runs list (/): every run of the directory, its sweeps, and the runs ticked for the compare page.
import {damageText, el, fmt, getJSON, playedText, shortName} from "./common.js";

// Runs ticked for the compare page (kept across the list's refreshes).
const selected = new Set();

function updateCompare() {
  document.getElementById("compare").disabled = selected.size < 1;
}

function pick(run) {
  const box = el("input", {type: "checkbox", class: "pick", value: run, title: "compare " + run});
  box.checked = selected.has(run);
  box.addEventListener("change", () => {
    if (box.checked) selected.add(run); else selected.delete(run);
    updateCompare();
  });
  return box;
}

// Each sweep: its spec, seeds, how many runs have started, and a link to its compare page.
async function loadSweeps() {
  const data = await getJSON("/api/sweeps");
  document.getElementById("sweeps-section").hidden = data.sweeps.length === 0;
  document.getElementById("sweeps").replaceChildren(...data.sweeps.map(s => {
    const started = s.runs.filter(r => r).length;
    return el("li", {}, el("a", {href: "/compare?sweep=" + encodeURIComponent(s.id)}, s.id), " · " + s.spec +
      " · seeds " + s.seeds.join(", ") + " · " + started + " of " + s.runs.length + " runs started");
  }));
}

async function loadRuns() {
  const data = await getJSON("/api/runs");
  const body = document.querySelector("#runs tbody");
  body.replaceChildren();
  for (const run of data.runs) {
    const link = el("span", {}, el("a", {href: "/run/" + encodeURIComponent(run.run)}, run.run), run.damaged ?
      el("span", {class: "badge damaged", title: damageText(run.damaged)}, "damaged: line " + run.damaged.line) : null,
      run.evaluation ? el("span", {class: "badge evaluation", title: playedText(run.evaluation)}, "evaluation") : null);
    const evaluated = run.final_eval;  // the learners' latest evaluations, averaged
    const evalReturn = evaluated ? fmt(evaluated.mean_return) : "-";
    let evalSuccess = evaluated && evaluated.success_rate !== null ? fmt(evaluated.success_rate) : "-";
    const played = run.evaluation && run.evaluation.agents ? Object.values(run.evaluation.agents) : [];
    if (played.length === 1 && played[0].success_ci95) {  // a play of one table: its 95 % interval too
      evalSuccess += " [" + played[0].success_ci95.map(v => fmt(v)).join(", ") + "]";
    }
    const started = run.started ? new Date(run.started * 1000).toLocaleString() : "-";
    // live, finished, interrupted, failed or abandoned; what it rests on in the tooltip
    body.append(el("tr", {class: run.state},
      el("td", {}, pick(run.run)), el("td", {}, link), el("td", {title: run.state_why}, run.state +
        (run.indexing === null ? "" : " · indexing " + Math.floor(run.indexing * 100) + " %")), el("td", {}, run.env || "-"),
      el("td", {}, run.experiment || "-"), el("td", {}, run.agents.map(shortName).join(", ")),
      el("td", {}, run.learners), el("td", {}, run.episodes),
      el("td", {class: "num"}, evalReturn), el("td", {class: "num"}, evalSuccess), el("td", {}, started)));
  }
  document.getElementById("empty").hidden = data.runs.length > 0;
  const busy = data.runs.some(r => r.live || r.indexing !== null);
  document.getElementById("status").textContent = busy ? "refreshing: a run is live or being indexed" : "";
  return busy;
}

async function loop() {
  const [live] = await Promise.all([loadRuns(), loadSweeps()]);
  setTimeout(loop, live ? 2000 : 10000);
}
document.getElementById("compare").addEventListener("click", () => {
  location.href = "/compare?runs=" + [...selected].map(encodeURIComponent).join(",");
});
loop();

// The control page exists under `bdi-rl serve` only: `bdi-rl view` shows no link to it.
fetch("/api/server").then(r => r.json()).then(s => { document.getElementById("control-link").hidden = s.control !== true; }, () => {});
