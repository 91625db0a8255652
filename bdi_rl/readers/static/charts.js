// Learning curves on plotly.js (served by the viewer from the installed plotly wheel, under
// the page's CSP: readers/vendor.py). Every number comes from /api/curves (readers/curves.py);
// this file only draws. The Q-table grid and the message-flow diagram below stay on a canvas.
// plotly.js is a classic script of the page (before its module): read as window.Plotly.
import {PALETTE, getJSON, messageText, shortName} from "./common.js";

const X_TITLES = {episodes: "episodes", env_steps: "env steps", time: "wall time (s since the run's start)"};
const CHART_CONFIG = {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"]};

// The chart controls of the page (x-axis, smoothing), as /api/curves parameters.
function curveParams() {
  const x = document.getElementById("x-axis").value;
  const smooth = Math.max(0, Math.floor(Number(document.getElementById("smooth").value) || 0));
  const method = document.getElementById("smooth-method").value;
  return "x=" + encodeURIComponent(x) + "&smooth=" + smooth + "&method=" + encodeURIComponent(method);
}

// Fetches /api/curves?<query>&<controls> and hands the answer to draw(data); again when a
// control changes, and each time refresh() is called (live runs). Only the latest answer is drawn.
export class CurvePanel {
  constructor(query, draw) {
    this.query = query;
    this.draw = draw;
    this.pending = null;
    this.drawn = 0;
    for (const id of ["x-axis", "smooth", "smooth-method"]) {
      document.getElementById(id).addEventListener("change", () => this.refresh());
    }
  }

  async refresh() {
    const token = this.pending = {};
    const data = await getJSON("/api/curves?" + this.query + "&" + curveParams());
    if (token !== this.pending) return null;
    this.draw(data);
    document.body.dataset.charts = String(++this.drawn);  // tests wait for a new drawing
    return data;
  }
}

function xTitle(data, raw) {
  if (raw) return X_TITLES[data.x];
  const smoothing = data.smooth > 1 ? (data.method === "ema" ? "EMA of span " : "rolling mean of ") + data.smooth : "raw";
  return X_TITLES[data.x] + " · " + smoothing;
}

// One plot: its traces, round ticks (plotly's), values on hover, zoom by dragging (double
// click: back). data-traces / data-points say what is drawn (points: of the curves proper).
// raw: values never smoothed (evaluations), so the x-axis title names no smoothing.
export function plotCurves(id, traces, data, yTitle, yRange, raw) {
  const div = document.getElementById(id);
  const layout = {
    margin: {l: 56, r: 12, t: 12, b: 60}, height: 300,
    hovermode: "x", showlegend: true, legend: {orientation: "h", x: 0, y: 0, yref: "container", yanchor: "bottom"},
    xaxis: {title: {text: xTitle(data, raw)}, zeroline: false, hoverformat: data.x === "episodes" ? ",d" : ",.4~g"},
    yaxis: {title: {text: yTitle}, hoverformat: ".4~g", range: yRange, zeroline: false},
    uirevision: data.x,  // a zoom survives live updates and smoothing, not a change of x-axis
  };
  if (!traces.length) layout.annotations = [{text: "no episodes yet", showarrow: false, xref: "paper", yref: "paper", x: 0.5, y: 0.5}];
  const rows = Math.ceil(traces.filter(t => t.showlegend !== false).length / 3);  // the legend, below
  layout.margin.b += 20 * rows;
  layout.height += 20 * rows;
  window.Plotly.react(div, traces, layout, CHART_CONFIG);
  div.dataset.traces = String(traces.length);
  div.dataset.points = String(traces.filter(t => t.meta === "curve").reduce((n, t) => n + t.x.length, 0));
}

export function line(x, y, name, color, extra) {
  return Object.assign({type: "scatter", mode: "lines", x, y, name, line: {color, width: 1.5}, meta: "curve"}, extra || {});
}

// A filled band between lo and hi (points where either is missing are left out).
export function band(x, lo, hi, name, color, meta) {
  const keep = x.map((_, i) => i).filter(i => lo[i] !== null && hi[i] !== null);
  const xs = keep.map(i => x[i]), top = keep.map(i => hi[i]), bottom = keep.map(i => lo[i]);
  return {type: "scatter", mode: "lines", x: xs.concat(xs.slice().reverse()), y: top.concat(bottom.reverse()),
          fill: "toself", fillcolor: color, line: {width: 0}, name, hoverinfo: "skip", meta};
}

// The aggregate of one metric: mean with its min-max band; with enough samples the IQM and
// its 95 % bootstrap confidence interval (rliable's statistics).
// A few points (evaluations only at the end) draw as markers with error bars, not as bands.
export function aggregateTraces(agg, label) {
  if (!agg || !agg.x.length) return [];
  const few = agg.x.length < 3;
  const bars = (mid, lo, hi) => ({type: "data", symmetric: false, visible: few, color: "#777777",
    array: mid.map((v, i) => v === null || hi[i] === null ? null : hi[i] - v),
    arrayminus: mid.map((v, i) => v === null || lo[i] === null ? null : v - lo[i])});
  const mode = few ? "lines+markers" : "lines";
  const traces = [band(agg.x, agg.min, agg.max, "min-max of " + label, "rgba(120,120,120,0.15)", "band"),
                  line(agg.x, agg.mean, "mean of " + label, "#555555", {mode, error_y: bars(agg.mean, agg.min, agg.max),
                       line: {color: "#555555", width: 2, dash: "dash"}, meta: "mean"})];
  if (agg.iqm.some(v => v !== null)) {
    traces.push(band(agg.x, agg.ci_low, agg.ci_high, "IQM 95 % CI", "rgba(0,0,0,0.22)", "ci"),
                line(agg.x, agg.iqm, "IQM of " + label, "#000000", {mode, error_y: bars(agg.iqm, agg.ci_low, agg.ci_high),
                     line: {color: "#000000", width: 2.5}, marker: {size: 9, symbol: "square"}, meta: "iqm"}));
  }
  return traces;
}

function evalLine(agent, metric, name, color, group) {
  return line(agent.eval.x, agent.eval[metric], name, color,
              {mode: "lines+markers", line: {color, width: 1.5, dash: "dot"}, marker: {size: 7, symbol: "diamond"}, meta: "evaluation", legendgroup: group});
}

// The run page: one colour per learner; evaluations (greedy, no learning) next to training.
export function drawRunCharts(data) {
  const run = data.runs[0] || {agents: []};
  const ret = [], success = [], eps = [];
  run.agents.forEach((a, i) => {
    const color = PALETTE[i % PALETTE.length], name = shortName(a.agent);
    ret.push(line(a.train.x, a.train.return, name, color, {legendgroup: name}));
    success.push(line(a.train.x, a.train.success, name, color, {legendgroup: name}));
    eps.push(line(a.train.x, a.train.epsilon, name, color, {legendgroup: name}));
    if (a.eval.x.length) {
      ret.push(evalLine(a, "return", name + " eval", color, name));
      success.push(evalLine(a, "success", name + " eval", color, name));
    }
  });
  plotCurves("chart-return", ret, data, "episodic return");
  plotCurves("chart-success", success, data, "success rate", [-0.02, 1.02]);
  plotCurves("chart-epsilon", eps, data, "epsilon", [-0.02, 1.02], true);  // never smoothed
  const agg = data.aggregate.metrics;
  plotCurves("chart-band", aggregateTraces(agg.return, "learners").concat(aggregateTraces(agg.eval_return, "evaluations")),
             data, "return across learners");
}

// Learned plan selection (plan.choice): each option's value in the abstract states the agent
// chose in most often, over training (/api/runs/<id>: plan_values). Hidden without choices.
export function drawPlanValues(run) {
  const traces = [];
  Object.entries(run.agents).forEach(([jid, a], i) => (a.plan_values || []).forEach((s, k) => {
    const name = shortName(jid) + ": @" + s.plan + " for " + s.goal + " in " + (s.state || "no state");
    traces.push(line(s.episodes, s.values, name, PALETTE[(i + k) % PALETTE.length], {mode: "lines+markers", marker: {size: 4}}));
  }));
  document.getElementById("plan-values").hidden = !traces.length;
  if (traces.length) plotCurves("chart-plan-values", traces, {x: "episodes", smooth: 1}, "plan value", undefined, true);
}

// Viridis-like ramp from dark blue (low) to yellow (high).
function ramp(t) {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  t = Math.max(0, Math.min(1, t)) * (stops.length - 1);
  const i = Math.min(Math.floor(t), stops.length - 2), f = t - i;
  const c = stops[i].map((v, k) => Math.round(v + f * (stops[i + 1][k] - v)));
  return "rgb(" + c.join(",") + ")";
}

export function drawQGrid(canvas, grid) {
  // grid: {rows, cols, max_q: [[v|null]], moves: [[[dx, dy]|null]], letters: [[""]]}
  const ctx = canvas.getContext("2d");
  const size = Math.floor(Math.min(canvas.width / grid.cols, canvas.height / grid.rows));
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const values = grid.max_q.flat().filter(v => v !== null);
  const lo = Math.min(...values), hi = Math.max(...values);
  let drawn = 0;
  for (let y = 0; y < grid.rows; y++) {
    for (let x = 0; x < grid.cols; x++) {
      const v = grid.max_q[y][x], cx = x * size + size / 2, cy = y * size + size / 2;
      ctx.fillStyle = v === null ? "#d9d9d9" : ramp(hi > lo ? (v - lo) / (hi - lo) : 1);
      ctx.fillRect(x * size, y * size, size - 1, size - 1);
      const letter = grid.letters[y][x], move = grid.moves[y][x];
      ctx.fillStyle = "#000"; ctx.strokeStyle = "#fff"; ctx.lineWidth = 2;
      if (letter === "H" || letter === "G") {
        ctx.font = "bold " + Math.floor(size / 2.5) + "px sans-serif";
        ctx.fillText(letter, cx - size / 8, cy + size / 8);
      } else if (move) {
        const ex = cx + move[0] * size * 0.32, ey = cy + move[1] * size * 0.32;
        ctx.beginPath(); ctx.moveTo(cx - move[0] * size * 0.2, cy - move[1] * size * 0.2); ctx.lineTo(ex, ey); ctx.stroke();
        ctx.beginPath(); ctx.arc(ex, ey, 3, 0, 2 * Math.PI); ctx.fillStyle = "#fff"; ctx.fill();
        drawn++;
      }
    }
  }
  canvas.dataset.arrows = String(drawn);
  return {lo, hi};
}

// Sequence diagram: one lane per agent, one arrow per message, oldest at the top.
// ``text`` cut with an ellipsis to at most ``width`` pixels (the table below has it whole).
function fitText(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ctx.measureText(text.slice(0, mid) + "…").width <= width) lo = mid; else hi = mid - 1;
  }
  return text.slice(0, lo) + "…";
}

export function drawSequence(canvas, agents, messages) {
  const rowHeight = 22, top = 40, laneWidth = Math.max(140, Math.floor(canvas.width / Math.max(1, agents.length)));
  canvas.width = Math.max(canvas.width, laneWidth * agents.length);
  canvas.height = top + rowHeight * (messages.length + 1);
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.font = "12px sans-serif";
  const lane = {};
  agents.forEach((jid, i) => {
    const x = lane[jid] = laneWidth * i + laneWidth / 2;
    ctx.fillStyle = "#222"; ctx.fillText(shortName(jid), x - ctx.measureText(shortName(jid)).width / 2, 16);
    ctx.strokeStyle = "#bbb"; ctx.setLineDash([4, 4]);
    ctx.beginPath(); ctx.moveTo(x, 24); ctx.lineTo(x, canvas.height); ctx.stroke();
  });
  ctx.setLineDash([]);
  let drawn = 0, widest = 0;
  messages.forEach((m, k) => {
    const x0 = lane[m.from], x1 = lane[m.to], y = top + rowHeight * k;
    if (x0 === undefined || x1 === undefined) return;
    ctx.strokeStyle = m.performative === "achieve" ? "#d62728" : "#1f77b4"; ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
    const dir = x1 >= x0 ? 1 : -1;
    ctx.beginPath(); ctx.moveTo(x1, y); ctx.lineTo(x1 - 7 * dir, y - 4); ctx.lineTo(x1 - 7 * dir, y + 4); ctx.closePath();
    ctx.fillStyle = ctx.strokeStyle; ctx.fill();
    ctx.fillStyle = "#222";
    const left = Math.min(x0, x1) + 6;  // a label fits its arrow (a self-message its lane), never the canvas edge
    const room = Math.min(Math.max(Math.abs(x1 - x0), laneWidth) - 12, canvas.width - left - 4);
    const label = fitText(ctx, m.performative + " " + messageText(m, 60), room);
    ctx.fillText(label, left, y - 4);
    drawn++;
    widest = Math.max(widest, left + ctx.measureText(label).width);
  });
  canvas.dataset.arrows = String(drawn);
  canvas.dataset.labelsRight = String(Math.ceil(widest));  // for the browser test: labels stay on the canvas
}
