// /ui/sessions: the project's sessions (conversations) from GET /sessions, in id order, a page
// at a time (the URL holds the cursor, so a page can be bookmarked); each row counts the
// session's turns, operations, cases and failures (lower bounds, "≥", past the service's count
// cap) and links to its session page.
"use strict";

(function () {
  const { el, link, page, api, table, when, mount, fail } = MT;
  const PAGE_SIZE = 50;
  const params = new URLSearchParams(location.search);
  const after = params.get("after") || "";

  const explain = el("p", { class: "note", id: "sessions-note" },
    "A session is a conversation: the operations naming it as their session id (the SDK's ",
    "session_id, OpenTelemetry's session.id or gen_ai.conversation.id) or as a conversation_id ",
    "attribute, and the messages they read. Operations whose trace names no conversation are in ",
    "no session: find them through the cases.");

  // a session over the service's count cap (MEMTRACE_SESSION_COUNT_CAP) has at least this many
  function counted(row, n) {
    return row.capped ? `≥ ${n}` : n;
  }

  function pager(next) {
    const first = after ? link(page("sessions", {}), "← first page") : null;
    const more = next ? link(page("sessions", { after: next }), "next →") : null;
    return el("nav", { class: "pager", "aria-label": "pages" }, first, more);
  }

  async function load() {
    const found = await api("sessions", { after, limit: PAGE_SIZE });
    const columns = [
      ["session", (r) => link(page("sessions", {}, r.id), r.id)],
      ["turns", (r) => counted(r, r.turns)],
      ["operations", (r) => counted(r, r.operations)],
      ["cases", (r) => counted(r, r.cases)],
      ["failed", (r) => counted(r, r.failed_cases)],
      ["first", (r) => when(r.first_at)],
      ["last", (r) => when(r.last_at)],
    ];
    mount(
      explain,
      found.sessions.length
        ? table(columns, found.sessions, "sessions")
        : el("p", { id: "empty", class: "note", text: after ? "No more sessions." : "No session is named in this project." }),
      pager(found.next_after),
    );
  }

  load().catch((error) => {
    mount(explain);
    fail(error);
  });
})();
