// The compare page: several runs (?runs=id1,id2) or a sweep (?sweep=id) overlaid, with their
// aggregate (charts.js draws, /api/curves computes). Polls every 2 s while any run is live
// or, for a sweep, while some of its seeds have not started.
import {PALETTE, el, shortName} from "./common.js";
import {CurvePanel, aggregateTraces, band, line, plotCurves} from "./charts.js";
import {showGroups} from "./groups.js";

const PARAMS = new URLSearchParams(location.search);
const QUERY = PARAMS.has("sweep") ? "sweep=" + encodeURIComponent(PARAMS.get("sweep"))
  : "runs=" + encodeURIComponent(PARAMS.get("runs") || "");
const POLL_MS = 2000;
const GROUPS_MS = 10000;
let groupsAt = Date.now();

// Short names for the legend: "seed N" for runs of one env and experiment with distinct
// seeds (a sweep), else the parts of the run ids (env__experiment__seed__time) that differ.
function runLabels(runs) {
  const parts = runs.map(r => r.run.split("__"));
  const seeds = parts.map(p => p[2]);
  if (parts.every(p => p.length === 4 && p[0] === parts[0][0] && p[1] === parts[0][1]) && new Set(seeds).size === seeds.length) {
    return seeds.map(s => "seed " + s);
  }
  const differ = (parts[0] || []).map((_, k) => parts.some(p => p[k] !== parts[0][k]));
  return runs.map((r, i) => parts[i].filter((_, k) => differ[k]).join("__") || r.run);
}

function runTraces(data, metric, evaluation) {
  const traces = [], labels = runLabels(data.runs);
  data.runs.forEach((run, i) => {
    const color = PALETTE[i % PALETTE.length];
    run.agents.forEach((a, j) => {
      const name = labels[i] + (run.agents.length > 1 ? " " + shortName(a.agent) : "");
      const extra = {legendgroup: run.run, showlegend: j === 0, opacity: 0.75, line: {color, width: 1.2}};
      traces.push(evaluation
        ? line(a.eval.x, a.eval[metric], name, color, Object.assign(extra, {mode: "lines+markers", marker: {size: 6}}))
        : line(a.train.x, a.train[metric], name, color, extra));
    });
  });
  return traces;
}

// A sweep drawn by configuration: each group's IQM with its CI (from 4 runs), else its mean
// with its min-max band, one colour per configuration.
function groupTraces(data, metric) {
  const traces = [];
  data.groups.forEach((group, i) => {
    const agg = group.metrics[metric], color = PALETTE[i % PALETTE.length];
    if (!agg || !agg.x.length) return;
    const iqm = agg.iqm.some(v => v !== null);
    const mid = iqm ? agg.iqm : agg.mean, lo = iqm ? agg.ci_low : agg.min, hi = iqm ? agg.ci_high : agg.max;
    const fill = "rgba(" + [1, 3, 5].map(k => parseInt(color.slice(k, k + 2), 16)).join(",") + ",0.15)";
    traces.push(band(agg.x, lo, hi, group.label + (iqm ? " (IQM 95 % CI)" : " (min-max)"), fill, "group-band"),
                line(agg.x, mid, group.label + " (" + group.samples + " runs, " + (iqm ? "IQM" : "mean") + ")", color,
                     {mode: agg.x.length < 3 ? "lines+markers" : "lines", line: {color, width: 2.5}, meta: "group"}));
  });
  return traces;
}

function drawCompareCharts(data) {
  const agg = data.aggregate.metrics, unit = data.across === "runs" ? "runs" : "learners";
  const grouped = data.groups && data.groups.length;
  const traces = (metric, key, evaluation) => grouped ? groupTraces(data, key)
    : runTraces(data, metric, evaluation).concat(aggregateTraces(agg[key], unit));
  plotCurves("chart-return", traces("return", "return", false), data, "episodic return");
  plotCurves("chart-success", traces("success", "success", false), data, "success rate", [-0.02, 1.02]);
  plotCurves("chart-eval-return", traces("return", "eval_return", true), data, "evaluation return", undefined, true);
  plotCurves("chart-eval-success", traces("success", "eval_success", true), data, "evaluation success rate", [-0.02, 1.02], true);
  document.getElementById("live").hidden = !data.live && !data.waiting;
  const links = data.runs.map(r => el("a", {href: "/run/" + encodeURIComponent(r.run)}, r.run));
  const what = document.getElementById("compare-what");
  what.replaceChildren(data.runs.length + " runs" + (PARAMS.has("sweep") ? " of sweep " + PARAMS.get("sweep") : "") +
    (data.waiting ? " (" + data.waiting + " more not started yet)" : "") +
    (data.aggregate.samples >= data.aggregate.iqm_min_samples ? "" : " (the IQM needs " + data.aggregate.iqm_min_samples + " or more)") + ": ",
    ...links.flatMap((a, i) => i ? [", ", a] : [a]));
}

async function poll(panel) {
  let data = null;
  try {
    data = await panel.refresh();
    document.getElementById("compare-error").textContent = "";
  } catch (error) {  // an unknown run or sweep (404): said once, not polled again
    document.getElementById("compare-error").textContent = "cannot load the curves: " + error.message;
    return;
  }
  // null: a newer request won; waiting: a sweep's seeds still queued or starting
  if (data === null || data.live || data.waiting) setTimeout(() => poll(panel), POLL_MS);
  // a sweep's table by configuration grows as its runs finish: read again now and then
  if (PARAMS.has("sweep") && data !== null && Date.now() - groupsAt > GROUPS_MS) {
    groupsAt = Date.now();
    showGroups(PARAMS.get("sweep"));
  }
}

function start() {
  document.getElementById("compare-title").textContent = PARAMS.has("sweep") ? "sweep " + PARAMS.get("sweep") : "compare runs";
  document.title = "bdi-rl " + document.getElementById("compare-title").textContent;
  const byGroup = document.getElementById("by-configuration");
  const panel = new CurvePanel(QUERY + "&across=runs", drawCompareCharts);
  byGroup.addEventListener("change", () => {
    panel.query = QUERY + "&across=runs" + (byGroup.checked ? "&by=configuration" : "");
    panel.refresh();
  });
  const groups = PARAMS.has("sweep") ? showGroups(PARAMS.get("sweep")) : Promise.resolve();
  Promise.all([poll(panel), groups]).then(() => { document.body.dataset.ready = "1"; });
}
start();
