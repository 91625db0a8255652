// Line charts on a canvas: no charting library is needed for a few series of a few thousand
// points, and none has to be shipped.
"use strict";

function rolling(values, window) {
  const out = [];
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i];
    if (i >= window) sum -= values[i - window];
    out.push(sum / Math.min(i + 1, window));
  }
  return out;
}

function drawChart(canvas, series, options) {
  // series: [{points: [[x, y], ...], color, band: [[x, lo, hi], ...]}]
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = {l: 48, r: 10, t: 10, b: 24};
  ctx.clearRect(0, 0, w, h);
  let xs = [], ys = [];
  for (const s of series) {
    for (const [x, y] of s.points) { xs.push(x); ys.push(y); }
    for (const [x, lo, hi] of s.band || []) { xs.push(x); ys.push(lo, hi); }
  }
  if (!xs.length) { ctx.fillStyle = "#888"; ctx.fillText("no episodes yet", w / 2 - 40, h / 2); return; }
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  if (options && options.yMin !== undefined) y0 = Math.min(y0, options.yMin);
  if (options && options.yMax !== undefined) y1 = Math.max(y1, options.yMax);
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) y1 = y0 + 1;
  const X = x => pad.l + (x - x0) / (x1 - x0) * (w - pad.l - pad.r);
  const Y = y => h - pad.b - (y - y0) / (y1 - y0) * (h - pad.t - pad.b);
  ctx.strokeStyle = "#ccc"; ctx.fillStyle = "#555"; ctx.lineWidth = 1; ctx.font = "11px sans-serif";
  for (let i = 0; i <= 4; i++) {
    const y = y0 + (y1 - y0) * i / 4;
    ctx.beginPath(); ctx.moveTo(pad.l, Y(y)); ctx.lineTo(w - pad.r, Y(y)); ctx.stroke();
    ctx.fillText(fmt(y, 2), 2, Y(y) + 4);
  }
  ctx.fillText(fmt(x0, 0), pad.l, h - 6);
  ctx.fillText(fmt(x1, 0) + " episodes", w - pad.r - 90, h - 6);
  for (const s of series) {
    if (s.band && s.band.length) {
      ctx.fillStyle = s.color + "33";
      ctx.beginPath();
      s.band.forEach(([x, lo], i) => i ? ctx.lineTo(X(x), Y(lo)) : ctx.moveTo(X(x), Y(lo)));
      for (let i = s.band.length - 1; i >= 0; i--) ctx.lineTo(X(s.band[i][0]), Y(s.band[i][2]));
      ctx.closePath(); ctx.fill();
    }
    ctx.strokeStyle = s.color; ctx.lineWidth = 1.5;
    ctx.beginPath();
    s.points.forEach(([x, y], i) => i ? ctx.lineTo(X(x), Y(y)) : ctx.moveTo(X(x), Y(y)));
    ctx.stroke();
  }
  canvas.dataset.points = String(series.reduce((n, s) => n + s.points.length, 0));
}

// Viridis-like ramp from dark blue (low) to yellow (high).
function ramp(t) {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  t = Math.max(0, Math.min(1, t)) * (stops.length - 1);
  const i = Math.min(Math.floor(t), stops.length - 2), f = t - i;
  const c = stops[i].map((v, k) => Math.round(v + f * (stops[i + 1][k] - v)));
  return "rgb(" + c.join(",") + ")";
}

function drawQGrid(canvas, grid) {
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
function drawSequence(canvas, agents, messages) {
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
  let drawn = 0;
  messages.forEach((m, k) => {
    const x0 = lane[m.from], x1 = lane[m.to], y = top + rowHeight * k;
    if (x0 === undefined || x1 === undefined) return;
    ctx.strokeStyle = m.performative === "achieve" ? "#d62728" : "#1f77b4"; ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
    const dir = x1 >= x0 ? 1 : -1;
    ctx.beginPath(); ctx.moveTo(x1, y); ctx.lineTo(x1 - 7 * dir, y - 4); ctx.lineTo(x1 - 7 * dir, y + 4); ctx.closePath();
    ctx.fillStyle = ctx.strokeStyle; ctx.fill();
    ctx.fillStyle = "#222";
    const label = m.performative + " " + messageText(m, 60);
    ctx.fillText(label, Math.min(x0, x1) + 6, y - 4);
    drawn++;
  });
  canvas.dataset.arrows = String(drawn);
}
