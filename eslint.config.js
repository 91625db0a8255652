// The JS lint of the viewer's scripts (bdi_rl/readers/static), run by .ci/run when npm is
// present: `npm ci && npx eslint bdi_rl/readers/static`. The scripts are ES modules loaded as
// they are (no build step): every name a script uses is its own, imported, or one of the
// browser's listed below. The list is explicit, not every browser global, so a typo such as
// `status` or `name` (both window properties) is an error rather than a silent window lookup.
const BROWSER = [
  "CSS", "EventSource", "Node", "URLSearchParams", "clearTimeout", "console", "document", "fetch",
  "history", "location", "performance", "sessionStorage", "setInterval", "setTimeout", "window",
];

export default [
  {
    files: ["bdi_rl/readers/static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: Object.fromEntries(BROWSER.map(name => [name, "readonly"])),
    },
    linterOptions: {reportUnusedDisableDirectives: "error"},
    rules: {
      "no-undef": "error",
      "no-unused-vars": "error",
      // The pages build their DOM from text nodes only (common.js's el): no markup from strings.
      "no-restricted-properties": ["error",
        {property: "innerHTML"}, {property: "outerHTML"}, {property: "insertAdjacentHTML"},
        {object: "document", property: "write"}],
    },
  },
];
