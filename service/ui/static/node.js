// /ui/units/{id} and /ui/operations/{id}: one node of the graph (GET /units/{id} or
// /operations/{id}) with links to its neighbours and to the cases that name it or blame it.
"use strict";

(async function () {
  const { ctx, el, link, caseUrl, nodeUrl, api, section, when, mount, fail } = MT;
  const ids = (list, to) => (list.length
    ? el("span", {}, list.map((id, i) => [i ? ", " : "", link(to(id), id)]))
    : "none");
  const facts = (pairs) => el("dl", { class: "facts", id: "node-facts" },
    pairs.filter(([, v]) => v !== null && v !== undefined && v !== "")
      .map(([term, value]) => [el("dt", { text: term }), el("dd", {}, value)]));
  const attributes = (a) => (Object.keys(a).length
    ? section("Attributes", el("pre", { class: "prompt-text", text: JSON.stringify(a, null, 2) }))
    : null);
  try {
    if (ctx.kind === "unit") {
      const u = await api(`units/${encodeURIComponent(ctx.name)}`);
      mount(
        section("Unit", facts([
          ["kind", u.kind], ["time", when(u.ts)], ["defined", u.defined ? "yes" : "no: referenced, never sent"],
          ["produced by", ids(u.produced_by, (id) => nodeUrl("operations", id))],
          ["consumed by", ids(u.consumed_by, (id) => nodeUrl("operations", id))],
          ["cases", ids(u.cases, caseUrl)],
        ])),
        section("Content", el("pre", { class: "prompt-text", id: "node-content", text: u.content ?? "" })),
        attributes(u.attributes),
      );
    } else {
      const o = await api(`operations/${encodeURIComponent(ctx.name)}`);
      mount(
        section("Operation", facts([
          ["name", o.name], ["kind", o.kind], ["system", o.system], ["session", o.session_id], ["time", when(o.ts)],
          ["consumes", ids(o.consumes, (id) => nodeUrl("units", id))],
          ["produces", ids(o.produces, (id) => nodeUrl("units", id))],
          ["blamed in", ids(o.blamed_in, caseUrl)],
        ])),
        attributes(o.attributes),
      );
    }
  } catch (error) {
    mount();
    fail(error);
  }
})();
