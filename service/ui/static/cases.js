// /ui/cases: the project's cases from GET /cases, with its search and filters, sorting and
// paging (the URL holds them, so a view can be bookmarked and shared); a verdict can be set on a
// row (POST /cases/{id}/verdict).
"use strict";

(function () {
  const { el, link, page, caseUrl, api, table, when, mount, fail } = MT;
  const PAGE_SIZE = 50;
  const FILTERS = [
    // [query parameter, label, input]
    ["q", "search questions and answers", "text"],
    ["verdict", "verdict", ["", "failed", "passed", "unknown"]],
    ["error_type", "error type", ["", "ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"]],
    ["attributed", "attributed", ["", "true", "false"]],
    ["system", "system", "text"],
    ["session_id", "session", "text"],
    ["prompt_version", "prompt version (blamed)", "text"],
    ["since", "answered from", "datetime-local"],
    ["until", "answered before", "datetime-local"],
    ["sort", "sort", ["id", "newest"]],
  ];
  const params = new URLSearchParams(location.search);
  const skip = Math.max(0, parseInt(params.get("skip") || "0", 10) || 0);

  function filterForm() {
    const fields = FILTERS.map(([name, label, input]) => {
      const id = `filter-${name}`;
      const value = params.get(name) || "";
      const control = Array.isArray(input)
        ? el("select", { id, name }, input.map((option) =>
          el("option", { value: option, text: option || "any", selected: option === value })))
        : el("input", { id, name, type: input, value, placeholder: input === "text" ? "any" : null });
      return el("label", { class: "field", for: id }, el("span", { text: label }), control);
    });
    const form = el("form", { id: "filters", class: "filters", role: "search" }, fields,
      el("button", { type: "submit", text: "Apply" }),
      el("a", { href: page("cases", {}), text: "clear" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault(); // the page's policy sends no form: the URL carries the filters
      const chosen = {};
      for (const [name] of FILTERS) chosen[name] = form.elements[name].value;
      location.href = page("cases", chosen);
    });
    return form;
  }

  function verdictControl(row) {
    const select = el("select", { "aria-label": `verdict of ${row.id}`, class: "verdict-select" },
      ["failed", "passed", "unknown"].map((v) => el("option", { value: v, text: v, selected: v === row.verdict })));
    select.addEventListener("change", async () => {
      select.disabled = true;
      try {
        const saved = await api(`cases/${encodeURIComponent(row.id)}/verdict`, {}, { json: { verdict: select.value } });
        row.verdict = saved.verdict;
        select.dataset.saved = saved.verdict;
      } catch (error) {
        select.value = row.verdict;
        fail(error);
      } finally {
        select.disabled = false;
      }
    });
    return select;
  }

  function pager(count, more) {
    const here = Object.fromEntries(params);
    const prev = skip > 0 ? link(page("cases", { ...here, skip: Math.max(0, skip - PAGE_SIZE) }), "← previous") : null;
    const next = more ? link(page("cases", { ...here, skip: skip + PAGE_SIZE }), "next →") : null;
    const shown = count ? `cases ${skip + 1}–${skip + count}` : "no cases";
    return el("nav", { class: "pager", "aria-label": "pages" }, prev, el("span", { id: "shown", text: shown }), next);
  }

  async function load() {
    const query = { skip, limit: PAGE_SIZE + 1 };
    for (const [name] of FILTERS) {
      const value = params.get(name);
      if (value) query[name] = value;
    }
    const rows = await api("cases", query);
    const more = rows.length > PAGE_SIZE;
    const shown = rows.slice(0, PAGE_SIZE);
    const columns = [
      ["case", (r) => link(caseUrl(r.id), r.id)],
      ["question", (r) => r.question],
      ["given answer", (r) => r.answer],
      ["verdict", verdictControl],
      ["attribution", (r) => r.error_type || r.attribution_status || "not attributed"],
      ["system", (r) => r.system],
      ["session", (r) => (r.session_id ? link(page("sessions", {}, r.session_id), r.session_id) : "")],
      ["answered", (r) => when(r.answered_at)],
    ];
    mount(
      filterForm(),
      shown.length ? table(columns, shown, "cases") : el("p", { id: "empty", class: "note", text: "No cases match." }),
      pager(shown.length, more),
    );
  }

  load().catch((error) => {
    mount(filterForm());
    fail(error);
  });
})();
