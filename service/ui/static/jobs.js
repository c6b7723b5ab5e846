// /ui/jobs: the project's attribution jobs (GET /attribution-jobs) with live progress; start one
// over every failed case with a judge of your choice, stop a running one, resume a stopped or
// interrupted one. While a job runs the list is read again every second.
"use strict";

(function () {
  const { el, api, table, when, mount, fail } = MT;
  const ACTIVE = new Set(["running", "queued"]);
  let timer = null;

  function progress(job) {
    const bar = el("progress", { max: Math.max(job.total, 1), value: job.done, "aria-label": `job ${job.id} progress` });
    return el("span", { class: "progress" }, bar, ` ${job.done} / ${job.total}`);
  }

  function actions(job) {
    const act = (label, path) => el("button", {
      type: "button", text: label, "data-action": label,
      onclick: async (event) => {
        event.target.disabled = true;
        try {
          await api(`attribution-jobs/${encodeURIComponent(job.id)}/${path}`, {}, { json: {} });
        } catch (error) {
          fail(error);
        }
        refresh();
      },
    });
    if (ACTIVE.has(job.status)) return act("stop", "stop");
    if (job.status === "stopped" || job.status === "interrupted") return act("resume", "resume");
    return "";
  }

  function startForm() {
    const judge = el("select", { id: "judge", name: "judge" },
      ["heuristic", "llm", "llm-all"].map((j) => el("option", { value: j, text: j })));
    const refreshBox = el("input", { id: "refresh", name: "refresh", type: "checkbox" });
    const form = el("form", { id: "start", class: "filters" },
      el("label", { class: "field", for: "judge" }, el("span", { text: "judge" }), judge),
      el("label", { class: "field inline", for: "refresh" }, refreshBox, el("span", { text: "attribute attributed cases again" })),
      el("button", { type: "submit", text: "Attribute all failed cases" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        await api("attribution-jobs", {}, { json: { judge: judge.value, refresh: refreshBox.checked } });
      } catch (error) {
        fail(error);
      }
      refresh();
    });
    return form;
  }

  const form = startForm();

  async function refresh() {
    clearTimeout(timer);
    try {
      const jobs = await api("attribution-jobs", { limit: 50 });
      const columns = [
        ["job", (j) => j.id],
        ["status", (j) => el("span", { class: `badge ${j.status}`, text: j.status })],
        ["judge", (j) => j.judge + (j.refresh ? " (refresh)" : "")],
        ["progress", progress],
        ["attributed", (j) => j.attributed],
        ["inconclusive", (j) => j.inconclusive],
        ["unanswerable", (j) => j.unanswerable],
        ["not failed", (j) => j.not_failed],
        ["skipped", (j) => j.skipped],
        ["failed", (j) => j.failed],
        ["on the LLM", (j) => j.on_llm],
        ["started", (j) => when(j.created_at)],
        ["finished", (j) => when(j.finished_at)],
        ["", actions],
      ];
      mount(form, jobs.length ? table(columns, jobs, "jobs") : el("p", { class: "note", text: "No jobs yet." }));
      if (jobs.some((j) => ACTIVE.has(j.status))) timer = setTimeout(refresh, 1000);
    } catch (error) {
      fail(error);
    }
  }

  refresh();
})();
