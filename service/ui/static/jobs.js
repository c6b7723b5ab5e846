// /ui/jobs: the project's attribution jobs (GET /attribution-jobs) with live progress; start one
// over every failed case with a judge of your choice, stop a running one, resume a stopped or
// interrupted one. While a job runs the list is read again every second. Below, the check of
// the LLM judge (POST /judge/check): how well the configured model judges the probe set.
"use strict";

(function () {
  const { el, api, table, when, mount, fail, percent, section } = MT;
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

  // The judge check: run on demand (it makes some 15-30 LLM calls), its result shown here.
  function judgeCheck() {
    const recordBox = el("input", { id: "judge-check-record", name: "record", type: "checkbox" });
    const status = el("span", { id: "judge-check-status", class: "note", role: "status" });
    const result = el("dl", { id: "judge-check-result", class: "facts", hidden: true });
    const button = el("button", { type: "submit", text: "Run the judge check" });
    const form = el("form", { id: "judge-check", class: "filters" },
      el("label", { class: "field inline", for: "judge-check-record" }, recordBox,
        el("span", { text: "record it for this project (llm results then use its accuracy)" })),
      button, status);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      button.disabled = true;
      status.textContent = "checking…";
      try {
        const check = await api("judge/check", {}, { json: { record: recordBox.checked } });
        const seconds = (s) => (s === null ? "" : `${s.toFixed(2)} s`);
        const facts = [
          ["model", check.model],
          ["accuracy", check.accuracy === null ? "no verdicts" : percent(check.accuracy)],
          ["answered", `${check.answered} of ${check.units} units (${percent(check.answered_share)})`],
          ["calls", `${check.calls}, ${check.failed_calls} failed, ${check.malformed_calls} malformed`],
          ["latency", `median ${seconds(check.latency_median_s)}, p90 ${seconds(check.latency_p90_s)}`],
          ["tokens", `${check.input_tokens} in, ${check.output_tokens} out`],
          ["took", seconds(check.seconds)],
        ];
        result.replaceChildren(...facts.flatMap(([term, value]) =>
          [el("dt", { text: term }), el("dd", { text: value })]));
        result.hidden = false;
        status.textContent = recordBox.checked ? "done, recorded" : "done";
      } catch (error) {
        status.textContent = "failed";
        fail(error);
      } finally {
        button.disabled = false;
      }
    });
    return section("LLM judge check", el("p", { class: "note",
      text: "How well the configured model judges units labelled by construction." }), form, result);
  }

  const form = startForm();
  const checkPanel = judgeCheck();

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
      mount(form, jobs.length ? table(columns, jobs, "jobs") : el("p", { class: "note", text: "No jobs yet." }),
        checkPanel);
      if (jobs.some((j) => ACTIVE.has(j.status))) timer = setTimeout(refresh, 1000);
    } catch (error) {
      fail(error);
    }
  }

  refresh();
})();
