// /ui/sessions/{id}: one session from GET /sessions/{id}: its turns in conversation order, each
// with the operations it caused and what they produced; its cases with their verdicts and
// attributions (each linking to its case page); and its operations. Text only, never markup.
"use strict";

(function () {
  const { ctx, el, link, page, caseUrl, nodeUrl, api, table, section, when, mount, fail } = MT;
  const PAGE_SIZE = 100;
  const params = new URLSearchParams(location.search);
  const skip = Math.max(0, parseInt(params.get("skip") || "0", 10) || 0);

  function cut(text, chars) {
    return chars ? `${text} … (${chars} characters, cut)` : text;
  }

  function facts(s) {
    // past the service's count cap (MEMTRACE_SESSION_COUNT_CAP) a count is a lower bound
    const atLeast = (n) => (s.capped ? `≥ ${n}` : n);
    return el("dl", { class: "facts", id: "session-facts" },
      el("dt", { text: "turns" }), el("dd", { text: atLeast(s.turns) }),
      el("dt", { text: "operations" }), el("dd", { text: atLeast(s.operations) }),
      el("dt", { text: "cases" }), el("dd", { text: atLeast(s.cases) }),
      el("dt", { text: "failed" }), el("dd", { text: atLeast(s.failed_cases) }),
      el("dt", { text: "from" }), el("dd", { text: when(s.first_at) }),
      el("dt", { text: "to" }), el("dd", { text: when(s.last_at) }),
    );
  }

  function caused(op) {
    const outputs = op.outputs.map((u) => el("li", {},
      link(nodeUrl("units", u.id), u.kind || "unit"), " ", el("span", { text: cut(u.content ?? "", u.content_chars) })));
    const more = op.output_count > op.outputs.length ? el("li", { class: "note", text: `and ${op.output_count - op.outputs.length} more` }) : null;
    return el("li", { class: "caused" },
      link(nodeUrl("operations", op.id), op.name || op.id), " ",
      el("span", { class: "badge", text: op.kind || "other" }), " ",
      el("span", { class: "note", text: when(op.ts) }),
      outputs.length ? el("ul", { class: "outputs" }, outputs, more) : null);
  }

  function turn(t) {
    const ops = t.operations.map(caused);
    if (t.operation_count > t.operations.length) {
      ops.push(el("li", { class: "note", text: `and ${t.operation_count - t.operations.length} more operations` }));
    }
    return el("li", { class: "turn", id: `turn-${t.index}` },
      el("div", { class: "turn-head" },
        el("span", { class: "badge role", text: t.role || "message" }), " ",
        link(nodeUrl("units", t.id), t.id), " ",
        el("span", { class: "note", text: when(t.at) })),
      el("p", { class: "turn-text", text: cut(t.content ?? "", t.content_chars) }),
      ops.length ? el("ul", { class: "caused-list" }, ops) : el("p", { class: "note", text: "no operation read it" }));
  }

  function turnPager(view) {
    const here = (at) => page("sessions", { skip: at }, ctx.name);
    const prev = skip > 0 ? link(here(Math.max(0, skip - PAGE_SIZE)), "← earlier turns") : null;
    const next = skip + view.turns.length < view.summary.turns ? link(here(skip + PAGE_SIZE), "later turns →") : null;
    const shown = view.turns.length ? `turns ${skip + 1}–${skip + view.turns.length} of ${view.summary.turns}` : "";
    return el("nav", { class: "pager", "aria-label": "turn pages" }, prev, el("span", { id: "shown", text: shown }), next);
  }

  function cases(view) {
    if (!view.cases.length) return el("p", { class: "note", id: "no-cases", text: "No case was asked in this session." });
    const rows = [...view.cases].sort((a, b) => (a.verdict === "failed" ? 0 : 1) - (b.verdict === "failed" ? 0 : 1));
    return table([
      ["case", (c) => link(caseUrl(c.id), c.id)],
      ["question", (c) => c.question],
      ["given answer", (c) => c.answer],
      ["verdict", (c) => el("span", { class: `badge ${c.verdict}`, text: c.verdict })],
      ["attribution", (c) => c.error_type || c.attribution_status || "not attributed"],
      ["blamed operation", (c) => (c.blamed_operation ? link(nodeUrl("operations", c.blamed_operation), c.blamed_operation) : "")],
      ["answered", (c) => when(c.answered_at)],
    ], rows, "session-cases");
  }

  function operations(view) {
    if (!view.operations.length) return el("p", { class: "note", text: "No operation names this session." });
    const note = view.summary.operations > view.operations.length
      ? el("p", { class: "note", text: `The first ${view.operations.length} of ${view.summary.operations}.` }) : null;
    return el("div", {}, note, table([
      ["operation", (o) => link(nodeUrl("operations", o.id), o.name || o.id)],
      ["kind", (o) => o.kind],
      ["system", (o) => o.system],
      ["consumed", (o) => o.inputs],
      ["produced", (o) => o.outputs],
      ["time", (o) => when(o.ts)],
    ], view.operations, "session-operations"));
  }

  async function load() {
    const view = await api(`sessions/${encodeURIComponent(ctx.name)}`, { skip, limit: PAGE_SIZE });
    const turns = view.turns.length
      ? el("ol", { class: "turns", id: "turns" }, view.turns.map(turn))
      : el("p", { class: "note", id: "no-turns", text: "No message was read in this session (its operations read queries, contexts or memories)." });
    mount(
      section("Session", facts(view.summary)),
      section("Cases asked", cases(view)),
      section("Turns", turns, turnPager(view)),
      section("Operations", operations(view)),
    );
  }

  load().catch((error) => {
    mount();
    fail(error);
  });
})();
