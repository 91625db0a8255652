// The run a run page (/run/<id>) shows, from its URL, and the base of that run's API: what
// run.js and the panels it starts (world.js, search.js, joint.js) all fetch from.
export const RUN = decodeURIComponent(location.pathname.split("/").pop());
export const API = "/api/runs/" + encodeURIComponent(RUN);
