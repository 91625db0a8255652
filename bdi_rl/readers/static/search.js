// Search in a run: when each belief matching a pattern was first added and removed, by which
// agent and from which source (/api/runs/<run>/search); a hit moves the Mind Inspector there
// (run.js's inspectAt, given to startSearch). Every string enters the page as text.
import {el, fmt, getJSON, shortName} from "./common.js";
import {API} from "./runapi.js";

async function fillSearchAgents() {
  const run = await getJSON(API);
  document.getElementById("search-agent").replaceChildren(el("option", {value: ""}, "every agent"),
    ...Object.keys(run.agents).map(jid => el("option", {value: jid}, shortName(jid))));
}

function hitRow(hit, inspectAt) {
  const go = el("button", {type: "button", class: "go", title: "show this event in the Mind Inspector"}, String(hit.position));
  const row = el("tr", {"data-agent": hit.agent, "data-position": String(hit.position)},
    el("td", {}, shortName(hit.agent)), el("td", {}, hit.kind === "add" ? "added" : "removed"),
    el("td", {}, el("code", {}, hit.belief)), el("td", {}, shortName(hit.source)),
    el("td", {}, fmt(hit.episode)), el("td", {}, fmt(hit.step)), el("td", {}, go));
  row.addEventListener("click", () => inspectAt(hit.agent, hit.position));
  return row;
}

async function runSearch(inspectAt) {
  const pattern = document.getElementById("search-pattern").value;
  const agent = document.getElementById("search-agent").value;
  document.getElementById("search-summary").textContent = "searching…";
  const query = new URLSearchParams({belief: pattern});
  if (agent) query.set("agent", agent);
  const response = await fetch(API + "/search?" + query);
  const body = await response.json();
  const error = document.getElementById("search-error"), summary = document.getElementById("search-summary");
  const box = document.getElementById("search-results");
  error.textContent = response.ok ? "" : body.error;
  if (!response.ok) { summary.textContent = ""; box.hidden = true; return; }
  summary.textContent = body.found + (body.found === 1 ? " first add or removal" : " first adds and removals") +
    " (" + body.adds + " adds, " + body.dels + " removals matched)" +
    (body.truncated ? "; the first " + body.limit + " in time order" : "") +
    (body.indexing === null ? "" : "; indexed so far: " + Math.floor(body.indexing * 100) + " %");
  document.querySelector("#search-hits tbody").replaceChildren(...body.hits.map(hit => hitRow(hit, inspectAt)));
  box.hidden = body.hits.length === 0;
}

// The search form; inspectAt(agent, position) moves the inspector to a hit (run.js).
export function startSearch(inspectAt) {
  document.getElementById("search").addEventListener("submit", e => { e.preventDefault(); runSearch(inspectAt); });
  fillSearchAgents();
}
