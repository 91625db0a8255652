// The Mind Inspector's world panel: the agent's episode on its grid world (/api/.../world)
// and the episode player. It follows the inspector (run.js calls worldOnMind with each mind it
// shows) and drives it: each frame moves the inspector to that frame's event (run.js's
// showPosition, given to startWorld), so the beliefs and the Q-learner panels follow the
// player. Drawn on a canvas; every string from a trace enters the page as text.
import {el, fmt, getJSON, shortName} from "./common.js";
import {API} from "./runapi.js";

// showPosition: the inspector's (run.js), which the player drives.
const world = {agent: null, episode: null, data: null, frame: 0, playing: false, token: null, error: null,
               showPosition: null};
//: Frames a second at 1x.
const WORLD_RATE = 2;
const TILE = {
  frozenlake: {S: "#b8dcb0", F: "#dceefb", H: "#2f4050", G: "#f2c14e"},
  cliffwalking: {S: "#b8dcb0", ".": "#eeeeee", C: "#8c3b2c", G: "#f2c14e"},
  taxi: {".": "#f4f1e8", R: "#f4c7c3", G: "#c6e8c0", Y: "#fbeaa5", B: "#c3d6f4"},
};
const STATION_INK = {R: "#c0392b", G: "#27ae60", Y: "#b7950b", B: "#2e6fd8"};

function worldURL(agent, episode, frame) {
  return API + "/agents/" + encodeURIComponent(agent) + "/world?episode=" + episode + "&step=" + frame;
}

// The inspector showed a mind: the panel takes its agent and episode, and the frame at its position.
export async function worldOnMind(mind) {
  const episode = mind.episode ?? 0;
  if (mind.agent !== world.agent || episode !== world.episode) {
    await worldLoad(mind.agent, episode, mind.position);
    return;
  }
  if (!world.data || !world.data.frames.length) return;
  const at = frameAt(mind.position);
  if (at !== world.frame) { world.frame = at; await worldFrameDetails(); }
}

function frameAt(position) {
  const frames = world.data.frames;
  let at = 0;
  for (let i = 0; i < frames.length; i++) if (frames[i].position <= position) at = i;
  return at;
}

async function worldLoad(agent, episode, position) {
  worldPause();
  world.agent = agent; world.episode = episode; world.data = null; world.frame = 0;
  const token = world.token = {};
  const response = await fetch(worldURL(agent, episode, 0));
  const body = await response.json();
  if (token !== world.token) return;
  world.error = response.ok ? body.error || null : body.error;
  world.data = world.error ? null : body;
  if (world.data && world.data.frames.length) {
    world.frame = frameAt(position);
    if (world.frame) { await worldFrameDetails(); return; }
  }
  drawWorld();
}

// The beliefs and Q-values of the selected frame (the map and the steps stay as loaded).
async function worldFrameDetails() {
  const token = world.token = {};
  drawWorld();  // the agent moves at once; its beliefs and Q-values follow
  const body = await getJSON(worldURL(world.agent, world.episode, world.frame));
  if (token !== world.token || !world.data) return;
  world.data.beliefs = body.beliefs; world.data.q = body.q; world.data.frame = body.frame;
  drawWorld();
}

// A frame chosen on the panel: the inspector moves to its event (and calls worldOnMind back).
async function worldGo(frame) {
  if (!world.data || !world.data.frames.length) return;
  frame = Math.max(0, Math.min(world.data.frames.length - 1, frame));
  world.frame = frame;
  await Promise.all([worldFrameDetails(), world.showPosition(world.data.frames[frame].position)]);
}

function worldPlay() {
  if (!world.data || !world.data.frames.length || world.playing) return;
  if (world.frame >= world.data.frames.length - 1) world.frame = 0;
  world.playing = true;
  document.getElementById("world-play").disabled = true;
  document.getElementById("world-pause").disabled = false;
  const tick = async () => {
    if (!world.playing) return;
    const started = performance.now();
    await worldGo(world.frame + 1);
    if (!world.data || world.frame >= world.data.frames.length - 1) { worldPause(); return; }
    const delay = 1000 / (WORLD_RATE * Number(document.getElementById("world-speed").value));
    world.timer = setTimeout(tick, Math.max(0, delay - (performance.now() - started)));
  };
  world.timer = setTimeout(tick, 0);
}

function worldPause() {
  world.playing = false;
  clearTimeout(world.timer);
  document.getElementById("world-play").disabled = false;
  document.getElementById("world-pause").disabled = true;
}

function drawWorld() {
  const canvas = document.getElementById("world-canvas"), note = document.getElementById("world-note");
  const data = world.data, video = document.getElementById("world-video");
  const player = document.getElementById("world-controls");
  document.getElementById("world-title").textContent = world.agent
    ? "of " + shortName(world.agent) + ", episode " + world.episode : "";
  if (!data) {
    canvas.hidden = true; player.hidden = true; canvas.dataset.frame = ""; canvas.dataset.episode = "";
    note.textContent = world.error ? world.error.replace(/^\w+: /, "") : "";
    document.getElementById("world-beliefs").replaceChildren();
    return;
  }
  canvas.hidden = false;
  const hasFrames = data.frames.length > 0;
  player.hidden = !hasFrames;
  video.href = API + "/agents/" + encodeURIComponent(world.agent) + "/render?episode=" + world.episode;
  const w = data.world, size = Math.floor(Math.min(480 / w.cols, 360 / w.rows));
  canvas.width = w.cols * size; canvas.height = w.rows * size;
  canvas.dataset.family = w.family;
  canvas.dataset.episode = String(data.episode);  // which episode is drawn (a jump replaces the one shown)
  const ctx = canvas.getContext("2d");
  drawMap(ctx, data, size);
  video.hidden = !hasFrames;  // a joint episode too: every agent on the map (bdi-rl render)
  const frame = hasFrames ? data.frames[world.frame] : null;
  if (frame && data.joint) {
    drawJointFrame(ctx, frame, size);
    canvas.dataset.agents = String(frame.agents.length);
    canvas.dataset.items = String(frame.items.length);
    canvas.dataset.agentCell = frame.cell ? frame.cell.x + "," + frame.cell.y : "";
    canvas.dataset.frame = String(world.frame);
    canvas.dataset.frames = String(data.frames.length);
    canvas.dataset.position = String(frame.position);
    document.getElementById("world-frame").textContent = "joint step " + frame.step + " of " + data.frames.length +
      " · " + frame.action + ", team reward " + fmt(frame.r) + ", return " + fmt(frame.return) + " · event " + frame.position;
  } else if (frame) {
    drawPath(ctx, data.frames.slice(0, world.frame + 1), size);
    drawAgent(ctx, w, frame.cell, size);
    canvas.dataset.agentCell = frame.cell.x + "," + frame.cell.y;
    canvas.dataset.frame = String(world.frame);
    canvas.dataset.frames = String(data.frames.length);
    canvas.dataset.position = String(frame.position);
    // moves, not the trace's step stamps: the inspector's "step K" counts as the trace does (from 0 at
    // the first Q-update in both modes; a step-mode agent's percepts after move k are stamped k)
    document.getElementById("world-frame").textContent = "move " + world.frame + " of " + (data.frames.length - 1) +
      (frame.action ? " · " + frame.action + ", reward " + fmt(frame.r) + ", return " + fmt(frame.return) : " · start") +
      " · event " + frame.position;
  }
  const parts = ["episode " + data.episode + ": " + (data.outcome || "?") + ", return " + fmt(data.return) +
    ", " + data.steps.length + " steps"];
  if (data.joint) {
    parts[0] = "joint episode " + data.episode + ": " + (data.outcome || "?") + ", team return " + fmt(data.return) +
      ", " + data.steps.length + " joint steps";
    parts.push("every agent where the step left it (" + data.seats.map((s, i) =>
      s[1] + ": " + JOINT_INK_NAMES[i % JOINT_INK_NAMES.length]).join(", ") + "), olive squares: food with its level");
  }
  if (data.note) parts.push(data.note);
  if (data.q) parts.push("shading: max Q, arrows: greedy action, " + data.q.source);
  if (data.world_source === "spec") parts.push("map rebuilt from the run's spec (the trace predates recorded worlds)");
  note.textContent = parts.join(" · ");
  canvas.dataset.hazards = String(data.beliefs.filter(b => b.kind === "hazard").length);
  document.getElementById("world-beliefs").replaceChildren(...data.beliefs.map(b =>
    el("li", {}, el("code", {}, b.belief), el("span", {class: "source"},
      (b.sources.length > 1 ? "sources " : "source ") + b.sources.map(shortName).join(", ")))));
}

function drawMap(ctx, data, size) {
  const w = data.world, tiles = TILE[w.family] || {}, q = data.q;
  const values = q ? q.max.flat().filter(v => v !== null) : [];
  const lo = Math.min(...values), hi = Math.max(...values);
  ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.textBaseline = "top";
  for (let y = 0; y < w.rows; y++) {
    for (let x = 0; x < w.cols; x++) {
      const letter = w.map[y][x];
      ctx.fillStyle = tiles[letter] || "#eeeeee";
      ctx.fillRect(x * size, y * size, size - 1, size - 1);
      const v = q ? q.max[y][x] : null;
      if (v !== null && hi > lo && letter !== "H" && letter !== "C") {
        ctx.fillStyle = "rgba(46, 134, 193, " + (0.6 * (v - lo) / (hi - lo)).toFixed(3) + ")";
        ctx.fillRect(x * size, y * size, size - 1, size - 1);
      }
      ctx.font = "bold " + Math.floor(size / 4) + "px sans-serif";
      if (w.family === "taxi" && STATION_INK[letter]) {
        ctx.fillStyle = STATION_INK[letter]; ctx.fillText(letter, x * size + 4, y * size + 3);
      } else if (w.family !== "taxi" && "HGC".includes(letter)) {
        ctx.fillStyle = letter === "G" ? "#000" : "#fff"; ctx.fillText(letter, x * size + 4, y * size + 3);
      }
      const greedy = q ? q.greedy[y][x] : null;
      if (greedy !== null) drawArrow(ctx, x, y, size, data.moves[greedy], data.actions[greedy] || "");
    }
  }
  ctx.strokeStyle = "#000"; ctx.lineWidth = 4;
  for (const [wy, wx] of w.walls || []) {
    ctx.beginPath(); ctx.moveTo((wx + 1) * size, wy * size); ctx.lineTo((wx + 1) * size, (wy + 1) * size); ctx.stroke();
  }
  for (const b of data.beliefs) drawBelief(ctx, b, size);
  if (w.family === "taxi" && data.frames.length) {
    const cell = data.frames[world.frame].cell, stations = "RGYB";
    const dest = station(w, stations[cell.destination]);
    ctx.strokeStyle = STATION_INK[stations[cell.destination]]; ctx.lineWidth = 3;
    ctx.strokeRect(dest[0] * size + 6, dest[1] * size + 6, size - 13, size - 13);
    if (cell.passenger < 4) {
      const p = station(w, stations[cell.passenger]);
      ctx.fillStyle = "#8e44ad";
      ctx.beginPath(); ctx.arc((p[0] + 0.5) * size, (p[1] + 0.5) * size, size / 6, 0, 2 * Math.PI); ctx.fill();
    }
  }
}

// A shared world's joint step: the food left, then every seat's agent, each in its colour.
export const JOINT_INK = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
export const JOINT_INK_NAMES = ["blue", "red", "green", "purple", "orange", "cyan", "brown", "pink"];

function drawJointFrame(ctx, frame, size) {
  ctx.textAlign = "center"; ctx.textBaseline = "middle";
  for (const [x, y, level] of frame.items) {
    ctx.fillStyle = "#8c8c00";
    ctx.fillRect(x * size + size * 0.2, y * size + size * 0.2, size * 0.6, size * 0.6);
    ctx.fillStyle = "#fff"; ctx.font = "bold " + Math.floor(size / 3) + "px sans-serif";
    ctx.fillText(String(level), (x + 0.5) * size, (y + 0.5) * size);
  }
  frame.agents.forEach((a, i) => {
    const shared = frame.agents.slice(0, i).filter(b => b.x === a.x && b.y === a.y).length;  // never hide one
    ctx.fillStyle = JOINT_INK[i % JOINT_INK.length]; ctx.strokeStyle = "#000"; ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc((a.x + 0.5) * size + shared * size * 0.15, (a.y + 0.5) * size, size * 0.28, 0, 2 * Math.PI);
    ctx.fill(); ctx.stroke();
    ctx.fillStyle = "#fff"; ctx.font = "bold " + Math.floor(size / 4) + "px sans-serif";
    ctx.fillText(String(i + 1), (a.x + 0.5) * size + shared * size * 0.15, (a.y + 0.5) * size);
  });
  ctx.textAlign = "start"; ctx.textBaseline = "top";
}

function station(w, letter) {
  for (let y = 0; y < w.rows; y++) { const x = w.map[y].indexOf(letter); if (x >= 0) return [x, y]; }
  return [0, 0];
}

function drawArrow(ctx, x, y, size, move, action) {
  const cx = (x + 0.5) * size, cy = (y + 0.5) * size;
  ctx.fillStyle = ctx.strokeStyle = "#1b4f72"; ctx.lineWidth = 2;
  if (!move) { ctx.font = Math.floor(size / 5) + "px sans-serif"; ctx.fillText(action.slice(0, 1).toUpperCase(), cx + size / 6, cy + size / 8); return; }
  const [dx, dy] = move, r = size * 0.3;
  ctx.beginPath(); ctx.moveTo(cx - dx * r * 0.5, cy - dy * r * 0.5); ctx.lineTo(cx + dx * r, cy + dy * r); ctx.stroke();
  const bx = cx + dx * r * 0.55, by = cy + dy * r * 0.55, s = size * 0.09;
  ctx.beginPath(); ctx.moveTo(cx + dx * r, cy + dy * r); ctx.lineTo(bx - dy * s, by + dx * s); ctx.lineTo(bx + dy * s, by - dx * s);
  ctx.closePath(); ctx.fill();
}

function drawBelief(ctx, b, size) {
  const x0 = b.x * size, y0 = b.y * size;
  ctx.lineWidth = 3;
  if (b.kind === "hazard") {
    ctx.strokeStyle = "#e74c3c";
    ctx.beginPath(); ctx.moveTo(x0 + 8, y0 + 8); ctx.lineTo(x0 + size - 9, y0 + size - 9);
    ctx.moveTo(x0 + size - 9, y0 + 8); ctx.lineTo(x0 + 8, y0 + size - 9); ctx.stroke();
  } else if (b.kind === "goal") {
    ctx.strokeStyle = "#27ae60"; ctx.strokeRect(x0 + 4, y0 + 4, size - 9, size - 9);
  } else {  // where it believes it is
    ctx.strokeStyle = "#555"; ctx.setLineDash([4, 3]);
    ctx.beginPath(); ctx.arc(x0 + size / 2, y0 + size / 2, size * 0.36, 0, 2 * Math.PI); ctx.stroke();
    ctx.setLineDash([]);
  }
}

function drawPath(ctx, frames, size) {
  if (frames.length < 2) return;
  ctx.strokeStyle = "rgba(230, 126, 34, 0.6)"; ctx.lineWidth = 3;
  ctx.beginPath();
  frames.forEach((f, i) => { const px = (f.cell.x + 0.5) * size, py = (f.cell.y + 0.5) * size; i ? ctx.lineTo(px, py) : ctx.moveTo(px, py); });
  ctx.stroke();
}

function drawAgent(ctx, w, cell, size) {
  ctx.fillStyle = w.family === "taxi" && cell.passenger === 4 ? "#8e44ad" : "#e67e22";
  ctx.strokeStyle = "#000"; ctx.lineWidth = 2;
  ctx.beginPath(); ctx.arc((cell.x + 0.5) * size, (cell.y + 0.5) * size, size * 0.28, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
}

// What a cell holds, as the canvas's title (the hover text): its letter, Q and beliefs with sources.
function worldHover(event) {
  const canvas = event.target, data = world.data;
  if (!data) return;
  const w = data.world, size = canvas.width / w.cols;
  const rect = canvas.getBoundingClientRect();
  const x = Math.floor((event.clientX - rect.left) * canvas.width / rect.width / size);
  const y = Math.floor((event.clientY - rect.top) * canvas.height / rect.height / size);
  if (x < 0 || y < 0 || x >= w.cols || y >= w.rows) return;
  const lines = ["cell (" + x + ", " + y + ")" + (w.map[y][x] !== "." ? " " + w.map[y][x] : "")];
  if (data.q && data.q.max[y][x] !== null) {
    const g = data.q.greedy[y][x];
    lines.push("max Q " + fmt(data.q.max[y][x]) + (g !== null ? ", greedy " + (data.actions[g] || "a" + g) : ""));
  }
  const frame = data.frames[world.frame];
  if (data.joint && frame) {
    for (const a of frame.agents.filter(a => a.x === x && a.y === y)) lines.push(a.name + " (" + a.seat + ")");
    for (const item of frame.items.filter(i => i[0] === x && i[1] === y)) lines.push("food, level " + item[2]);
  }
  for (const b of data.beliefs.filter(b => b.x === x && b.y === y)) {
    lines.push(b.belief + " from " + b.sources.map(shortName).join(", "));
  }
  canvas.title = lines.join("\n");
}

// The panel's controls; showPosition(position) moves the inspector (run.js).
export function startWorld(showPosition) {
  world.showPosition = showPosition;
  document.getElementById("world-play").addEventListener("click", worldPlay);
  document.getElementById("world-pause").addEventListener("click", worldPause);
  document.getElementById("world-back").addEventListener("click", () => { worldPause(); worldGo(world.frame - 1); });
  document.getElementById("world-forward").addEventListener("click", () => { worldPause(); worldGo(world.frame + 1); });
  document.getElementById("world-canvas").addEventListener("mousemove", worldHover);
}
