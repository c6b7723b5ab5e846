// /ui/projects: every project this key may read, with its counts, failure share and last
// activity, each linking to its dashboard and its failed cases.
"use strict";

(async function () {
  const { el, link, page, api, table, when, percent, mount, fail } = MT;
  try {
    const projects = await api("projects", { project: null });
    const columns = [
      ["project", (p) => link(page("dashboard", { project: p.project }), p.project)],
      ["operations", (p) => p.operations],
      ["units", (p) => p.units],
      ["cases", (p) => p.cases],
      ["failed", (p) => link(page("cases", { project: p.project, verdict: "failed" }), p.failed_cases)],
      ["failure share", (p) => (p.cases ? percent(p.failed_cases / p.cases) : "")],
      ["last activity", (p) => when(p.last_activity)],
      ["OTLP warnings", (p) => p.otlp_warnings || ""],
      ["", (p) => (p.deleting ? "being deleted" : "")],
    ];
    mount(
      projects.length
        ? table(columns, projects, "projects")
        : el("p", { class: "note", text: "No projects yet: send a trace (POST /traces)." }),
    );
  } catch (error) {
    fail(error);
  }
})();
