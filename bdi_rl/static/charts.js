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
