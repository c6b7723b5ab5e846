// /ui/dashboard: the project's failures by error type and system over time (GET /report), what is
// blamed most, and how many failed cases wait for an attribution; every count links to the
// case list filtered to it.
"use strict";

(async function () {
  const { el, link, page, api, table, percent, bars, section, mount, fail } = MT;
  const TYPES = ["ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"];

  function trend(rows) {
    // One stacked column per period: each error type's share of the busiest period's height.
    const periods = [...new Set(rows.map((r) => r.period))].sort();
    const totals = periods.map((p) => rows.filter((r) => r.period === p).reduce((s, r) => s + r.count, 0));
    const most = Math.max(1, ...totals);
    const columns = periods.map((period, i) => {
      const stack = el("span", { class: "stack", title: `${period}: ${totals[i]}` });
      stack.style.height = `${(100 * totals[i]) / most}%`;
      for (const type of TYPES) {
        const row = rows.find((r) => r.period === period && r.error_type === type);
        if (!row) continue;
        const part = el("span", { class: `part ${type}`, title: `${period} ${type}: ${row.count}` });
        part.style.height = `${(100 * row.count) / totals[i]}%`;
        stack.append(part);
      }
      return el("li", {}, el("span", { class: "column" }, stack), el("span", { class: "period", text: period.slice(5) }));
    });
    const legend = el("ul", { class: "legend-row" }, TYPES.map((t) => el("li", {}, el("span", { class: `key ${t}` }), t)));
    return el("div", {}, el("ol", { class: "trend", id: "trend" }, columns), legend);
  }

  try {
    const report = await api("report");
    const t = report.totals;
    const facts = el("dl", { class: "facts", id: "totals" },
      el("dt", { text: "cases" }), el("dd", {}, link(page("cases", {}), t.cases)),
      el("dt", { text: "failed" }), el("dd", {}, link(page("cases", { verdict: "failed" }), t.failed)),
      el("dt", { text: "attributed" }), el("dd", {}, link(page("cases", { verdict: "failed", attributed: "true" }), t.attributed)),
      el("dt", { text: "not attributed yet" }),
      el("dd", {}, link(page("cases", { verdict: "failed", attributed: "false" }), t.failed_unattributed), " ",
        link(page("jobs", {}), "attribute them")),
      el("dt", { text: "inconclusive" }), el("dd", { text: t.inconclusive }),
      el("dt", { text: "judged by an LLM" }), el("dd", { text: `${report.cost.on_llm} of ${report.cost.llm_judged}` }),
      el("dt", { text: "by session" }),
      el("dd", {}, el("a", { id: "sessions-link", href: page("sessions", {}), text: "each conversation's turns and failures" })),
    );
    const byType = bars(report.by_error_type, (r) => r.error_type, (r) => r.count,
      (r) => page("cases", { verdict: "failed", error_type: r.error_type }));
    const bySystem = table([
      ["system", (r) => (r.system ? link(page("cases", { verdict: "failed", system: r.system }), r.system) : "(none)")],
      ["failures", (r) => r.count],
      ...TYPES.map((type) => [type.replace("Error", ""), (r) => r.by_error_type[type] || ""]),
    ], report.by_system, "by-system");
    const operations = table([
      ["operation", (r) => r.operation_name || "(none)"],
      ["system", (r) => r.system || ""],
      ["failures", (r) => r.count],
      ["share", (r) => percent(r.share)],
    ], report.top_operations.slice(0, 10), "top-operations");
    const versions = table([
      ["prompt version", (r) => link(page("prompts", {}, r.name), r.label)],
      ["operations", (r) => r.operations],
      ["failures", (r) => link(page("cases", { verdict: "failed", prompt_version: r.id }), r.failures)],
      ["failure rate", (r) => percent(r.failure_rate)],
    ], [...report.prompt_versions].sort((a, b) => b.failures - a.failures).slice(0, 10), "top-versions");
    mount(
      el("div", { class: "grid" },
        section("Failed cases", facts),
        section("By error type", byType),
        section("Over time (attributed failures per day)", report.trend.length ? trend(report.trend) : el("p", { class: "note", text: "No attributed failure has a time yet." })),
        section("By system", bySystem),
        section("Operations blamed most", operations),
        section("Prompt versions blamed most", report.prompt_versions.length ? versions : el("p", { class: "note", text: "No prompt versions traced." })),
      ),
    );
  } catch (error) {
    fail(error);
  }
})();
