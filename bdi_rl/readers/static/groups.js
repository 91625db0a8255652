// A sweep's runs grouped by configuration, on its compare page: a table sortable by any
// column, a CSV of it, and one axis of the sweep against the metric. Every number comes from
// /api/sweeps/<id>/groups (readers/sweepreport.py, as `bdi-rl sweep-report` prints it).
import {PALETTE, el, fmt, getJSON} from "./common.js";

const COLUMNS = [
  ["configuration", "configuration"], ["finished", "runs"], ["iqm", "IQM [95 % CI]"], ["mean", "mean ± std"],
  ["min", "min-max"], ["reached", "reached"], ["episodes_to_threshold_median", "episodes to it"],
  ["env_steps_to_threshold_median", "env steps to it"],
];

function num(value, digits) { return value === null || value === undefined || value === "" ? "-" : fmt(value, digits); }

function cell(row, key) {
  if (key === "iqm") return row.iqm === null ? "-" : num(row.iqm, 3) + " [" + num(row.iqm_ci_low, 3) + ", " + num(row.iqm_ci_high, 3) + "]";
  if (key === "mean") return num(row.mean, 3) + " ± " + num(row.std, 3);
  if (key === "min") return num(row.min, 3) + "-" + num(row.max, 3);
  if (key === "finished") return row.finished + "/" + row.runs + (row.failed ? " (" + row.failed + " failed)" : "");
  if (key === "reached") return row.reached + (row.censored ? " (censored: " + row.censored + ")" : "");
  if (key.endsWith("_median")) return num(row[key], 0);
  return String(row[key]);
}

function sortValue(row, key) {
  if (key === "configuration") return row.configuration;
  if (key === "iqm") return row.iqm === null ? row.mean : row.iqm;
  if (key === "reached") return Number(String(row.reached).split("/")[0]);
  return row[key] === null ? -Infinity : row[key];
}

// The settings of a configuration label ("learning.alpha=0.1, agents.x.asl=a.asl") by axis.
function settings(label, axes) {
  const out = {};
  for (const part of label.split(", ")) {
    const at = part.indexOf("=");
    if (axes.includes(part.slice(0, at))) out[part.slice(0, at)] = part.slice(at + 1);
  }
  return out;
}

function drawTable(data, state) {
  const rows = data.rows.slice().sort((a, b) => {
    const x = sortValue(a, state.key), y = sortValue(b, state.key);
    return (x < y ? -1 : x > y ? 1 : 0) * (state.descending ? -1 : 1);
  });
  const head = el("tr", {}, ...COLUMNS.map(([key, title]) => {
    const th = el("th", {"data-key": key, title: "sort by " + title}, title + (state.key === key ? (state.descending ? " ▼" : " ▲") : ""));
    th.addEventListener("click", () => {
      state.descending = state.key === key ? !state.descending : key !== "configuration";
      state.key = key;
      drawTable(data, state);
    });
    return th;
  }));
  const body = rows.map(row => el("tr", {}, ...COLUMNS.map(([key]) => el("td", {}, cell(row, key)))));
  document.getElementById("groups-table").replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
}

// The metric against one axis: a line per setting of the other axes, IQM (else mean) with
// its CI as error bars.
function drawAxis(data) {
  const axis = document.getElementById("groups-axis").value;
  const others = data.axes.filter(a => a !== axis);
  const series = new Map();
  for (const row of data.rows) {
    const s = settings(row.configuration, data.axes);
    const key = others.map(a => a + "=" + s[a]).join(", ") || data.metric;
    if (!series.has(key)) series.set(key, []);
    const value = row.iqm === null ? row.mean : row.iqm;
    if (value !== null) series.get(key).push({x: s[axis], y: value, low: row.iqm === null ? null : row.iqm_ci_low, high: row.iqm === null ? null : row.iqm_ci_high});
  }
  const traces = [...series.entries()].map(([name, points], i) => {
    points.sort((a, b) => (Number(a.x) - Number(b.x)) || String(a.x).localeCompare(String(b.x)));
    return {
      type: "scatter", mode: "lines+markers", name, x: points.map(p => p.x), y: points.map(p => p.y),
      line: {color: PALETTE[i % PALETTE.length]},
      error_y: {type: "data", symmetric: false, array: points.map(p => p.high === null ? 0 : p.high - p.y),
                arrayminus: points.map(p => p.low === null ? 0 : p.y - p.low)},
    };
  });
  const layout = {margin: {l: 56, r: 12, t: 12, b: 48}, height: 300, xaxis: {title: {text: axis}, type: "category"},
                  yaxis: {title: {text: "final evaluation " + data.metric + " (IQM, else mean)"}}, showlegend: traces.length > 1};
  window.Plotly.react("groups-chart", traces, layout, {displaylogo: false, responsive: true});
  document.getElementById("groups-chart").dataset.traces = String(traces.length);
}

// Shows the groups of the sweep (nothing for runs picked by hand, or a sweep of seeds only).
export async function showGroups(sweepId) {
  const section = document.getElementById("groups");
  let data;
  try {
    data = await getJSON("/api/sweeps/" + encodeURIComponent(sweepId) + "/groups");
  } catch {
    section.hidden = true;  // no run of it has finished yet: the curves say so
    return;
  }
  if (!data.axes.length || !data.rows.length) { section.hidden = true; return; }
  section.hidden = false;
  document.getElementById("by-configuration-box").hidden = false;
  document.getElementById("groups-what").textContent = data.rows.length + " configurations of " + data.axes.join(", ") +
    " over their seeds: final evaluation " + data.metric + "; IQM with its 95 % CI from " + data.iqm_min_runs +
    " runs; reached: runs whose training " + data.metric + " reached " + data.threshold + " (censored: never did)";
  document.getElementById("groups-csv").href = "/api/sweeps/" + encodeURIComponent(sweepId) + "/groups?format=csv";
  const select = document.getElementById("groups-axis");
  if (!select.options.length) {
    select.replaceChildren(...data.axes.map(a => el("option", {value: a}, a)));
    select.addEventListener("change", () => drawAxis(data));
  }
  drawTable(data, {key: "iqm", descending: true});
  drawAxis(data);
  document.body.dataset.groups = String(data.rows.length);
}
