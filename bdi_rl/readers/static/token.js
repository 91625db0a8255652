// The control surface's token (bdi-rl serve), shared by the pages that change things: the
// control page, the checkpoint library's play and warm-start buttons, a run page's Resume.
// The token comes in the URL's fragment (never sent to the server), is kept in this tab's
// sessionStorage and sent in a header with every POST.
const TOKEN_KEY = "bdi-rl-token";

export function takeToken() {
  const found = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (found) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(found[1]));
    history.replaceState(null, "", location.pathname + location.search);  // out of sight and history
  }
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

// A state-changing request: the token, and an Origin header (the page's no-referrer policy
// would make it "null", which the server refuses; same-origin keeps it).
export async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: {"Content-Type": "application/json", "X-BDI-RL-Token": takeToken()},
    body: JSON.stringify(body || {}),
    referrerPolicy: "same-origin",
    credentials: "same-origin",
  });
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (!response.ok) throw new Error((data && data.error) || (url + ": " + response.status));
  return data;
}

// Whether this page is served by bdi-rl serve (the control API exists) and holds its token:
// under bdi-rl view, or without the token, nothing is offered that would be refused (the
// server says which it is at /api/server: a control route would answer 404 under view).
export async function controlAvailable() {
  if (!takeToken()) return false;
  try {
    const response = await fetch("/api/server");
    return response.ok && (await response.json()).control === true;
  } catch { return false; }
}
