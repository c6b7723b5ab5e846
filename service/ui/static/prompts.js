// /ui/prompts: the project's prompts (GET /prompts), each version with the operations that ran
// with it, the failures blamed on them by error type, and its failure rate.
"use strict";

(async function () {
  const { el, link, page, api, table, percent, when, mount, fail } = MT;
  try {
    const prompts = await api("prompts");
    if (!prompts.length) {
      mount(el("p", { class: "note", text: "No prompts traced: send prompt units (kind \"prompt\") as operation inputs." }));
      return;
    }
    const rows = prompts.flatMap((p) => p.versions.map((v) => ({ name: p.name, latest: p.latest, ...v })));
    mount(table([
      ["prompt", (r) => link(page("prompts", {}, r.name), r.name)],
      ["version", (r) => r.label + (r.label === r.latest ? " (newest)" : "")],
      ["first used", (r) => when(r.first_used)],
      ["operations", (r) => r.operations],
      ["failures", (r) => (r.failures ? link(page("cases", { verdict: "failed", prompt_version: r.id }), r.failures) : 0)],
      ["by error type", (r) => Object.entries(r.failures_by_error_type).map(([t, n]) => `${t} ${n}`).join(", ")],
      ["failure rate", (r) => percent(r.failure_rate)],
    ], rows, "prompts"));
  } catch (error) {
    fail(error);
  }
})();
