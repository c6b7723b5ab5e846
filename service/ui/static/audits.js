// /ui/audits: each audit (GET /audits) with its description and parameters; running one shows a
// page of its rows (GET /audits/{name}), ids linking to their case, unit and operation pages,
// paged by next_skip (next_cursor for the audits that page with a cursor).
"use strict";

(async function () {
  const { el, link, caseUrl, nodeUrl, api, mount, fail } = MT;
  // Columns that hold ids (one or a list), by what they name (GET /audits describes each).
  const LINKS = {};
  for (const c of ["case", "cases"]) LINKS[c] = caseUrl;
  for (const c of ["message", "unit", "memory", "old_version", "new_version", "versions", "deleted_version", "evidence"]) {
    LINKS[c] = (id) => nodeUrl("units", id);
  }
  for (const c of ["operation", "deletion", "consumed_by", "produced_by", "produced_nothing", "retrievals", "read_by"]) {
    LINKS[c] = (id) => nodeUrl("operations", id);
  }

  function cell(column, value) {
    if (value === null || value === undefined) return "";
    if (LINKS[column]) {
      const ids = Array.isArray(value) ? value : [value];
      return el("span", {}, ids.map((id, i) => [i ? ", " : "", link(LINKS[column](id), id)]));
    }
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  function rowsTable(result) {
    const head = el("tr", {}, result.columns.map((c) => el("th", { scope: "col", text: c })));
    const body = result.rows.map((row) =>
      el("tr", {}, result.columns.map((c) => el("td", {}, cell(c, row[c])))));
    return el("div", { class: "table-wrap" },
      el("table", { class: "audit-rows" }, el("thead", {}, head), el("tbody", {}, body)));
  }

  function auditPanel(audit) {
    const out = el("div", { class: "audit-out", "aria-live": "polite" });
    const inputs = audit.parameters.map((p) => {
      const id = `${audit.name}-${p.name}`;
      const control = p.choices
        ? el("select", { id, name: p.name }, ["", ...p.choices].map((c) => el("option", { value: c, text: c || "any" })))
        : el("input", { id, name: p.name, type: p.type === "integer" ? "number" : "text",
          min: p.minimum, max: p.maximum, placeholder: p.default === null ? "" : String(p.default) });
      return el("label", { class: "field", for: id, title: p.description }, el("span", { text: p.name }), control);
    });
    const form = el("form", { class: "filters", "data-audit": audit.name }, inputs,
      el("button", { type: "submit", text: "Run" }));
    // from: { skip } for the audits paged by next_skip, { cursor } for those paged by
    // next_cursor (deleted_then_needed, retrieval_misses refuse a skip).
    async function run(from) {
      const query = { ...from, limit: 50 };
      for (const p of audit.parameters) {
        const value = form.elements[p.name].value;
        if (value !== "") query[p.name] = value;
      }
      out.replaceChildren(el("p", { class: "note", text: "running…" }));
      try {
        const result = await api(`audits/${encodeURIComponent(audit.name)}`, query);
        const next = result.next_cursor ? { cursor: result.next_cursor }
          : result.next_skip === null ? null : { skip: result.next_skip };
        const more = next === null ? null
          : el("button", { type: "button", class: "more", text: "next page", onclick: () => run(next) });
        // replaceChildren writes a null as the text "null": leave the button out instead.
        out.replaceChildren(
          el("p", { class: "note", text: from.cursor ? `${result.rows.length} row(s) from the cursor`
            : `${result.rows.length} row(s) from ${result.skip}` }),
          result.rows.length ? rowsTable(result) : el("p", { class: "note", text: "Nothing found." }),
          ...(more ? [more] : []),
        );
      } catch (error) {
        out.replaceChildren();
        fail(error);
      }
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      run(0);
    });
    const columns = el("details", {}, el("summary", { text: "columns" }),
      el("dl", { class: "facts" }, audit.columns.map((c) => [el("dt", { text: c.name }), el("dd", { text: c.description })])));
    return el("section", { class: "panel audit", id: `audit-${audit.name}` },
      el("h2", { text: audit.name }), el("p", { text: audit.description }), columns, form, out);
  }

  try {
    const audits = await api("audits", { project: null });
    mount(...audits.map(auditPanel));
  } catch (error) {
    fail(error);
  }
})();
