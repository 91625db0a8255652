// Shared helpers. Every string from a trace enters the page as a text node, never as HTML.
export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export async function getJSON(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(url + ": " + response.status);
  return response.json();
}

// A message's content for display: the trace keeps 1 KB of long bodies and their real length.
export function messageText(m, most) {
  const text = String(m.content ?? "");
  const total = m.content_chars || text.length;
  const cut = text.replace(/\.\.\. \(\d+ characters\)$/, "");
  return total > most ? cut.slice(0, most) + "… (" + total + " characters)" : cut;
}

export function shortName(jid) { return String(jid).split("@")[0]; }

export function fmt(value, digits) {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits ?? 3);
  return String(value);
}

// JSON for display: binary floating-point noise trimmed (epsilon 0.7150000000000001 shows as
// 0.715); 12 significant digits are kept, so no value a trace means to hold is lost.
export function tidyJSON(value, indent) {
  return JSON.stringify(value, (key, v) => typeof v === "number" && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v, indent);
}

export const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];

// A damaged trace (RunIndex.damaged): its first damaged line and why, and what was read
// around it. The viewer reads around damaged lines; this is what says so wherever a run is shown.
export function damageText(damaged) {
  const more = damaged.lines > 1 ? " (" + damaged.lines + " damaged lines)" : "";
  const rest = damaged.unread_from === null ? "the rest was read around it"
    : "nothing from line " + damaged.unread_from + " on was read";
  return "damaged trace: trace.jsonl:" + damaged.line + ": " + damaged.why + more + "; " + rest;
}

// A play's evaluation (bdi-rl play: summary.json's "evaluation"), one line per agent: the table
// played, then success and mean return with their 95 % intervals and how they were made.
export function playedText(evaluation) {
  const agents = Object.entries(evaluation.agents || {});
  if (!agents.length) return "an evaluation (bdi-rl play) still being played" + (evaluation.policy_only ? ", policy only" : "");
  return agents.map(([name, e]) => {
    if (!e.episodes) return name + ": no episode played";
    const table = e.checkpoint ? " of " + e.checkpoint.run + " / " + e.checkpoint.agent + " (" + e.checkpoint.episodes + " episodes trained)" : "";
    return name + table + ": " + e.episodes + " greedy episodes" + (evaluation.policy_only ? " (policy only)" : " (with its plans)") +
      ", success " + fmt(e.success_rate) + " [" + e.success_ci95.map(v => fmt(v)).join(", ") + "] (" + evaluation.success_ci + ")" +
      ", mean return " + fmt(e.mean_return) + " [" + e.return_ci95.map(v => fmt(v)).join(", ") + "] (" + evaluation.return_ci + ")" +
      (e.task_change ? "; played on another task: " + e.task_change : "");
  }).join("\n");
}
