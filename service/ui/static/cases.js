// The case list: one row per case with its stored attribution, each linking to its case view.
// Data goes on the page with textContent only.
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("memtrace-data").textContent);
  document.getElementById("project").textContent = data.project;
  document.title = `MemTrace · ${data.project}`;

  const filters = document.getElementById("filters");
  for (const [label, verdict] of [["failed", "failed"], ["passed", "passed"], ["all", null]]) {
    const link = document.createElement("a");
    const url = new URL("cases", location.href);
    url.searchParams.set("project", data.project);
    if (verdict) url.searchParams.set("verdict", verdict);
    link.href = url.href;
    link.textContent = label;
    if (verdict === data.verdict) link.style.fontWeight = "bold";
    filters.append(link);
  }

  const cell = (value) => {
    const td = document.createElement("td");
    td.textContent = value === null || value === undefined ? "" : String(value);
    return td;
  };
  const body = document.querySelector("#cases tbody");
  for (const row of data.cases) {
    const tr = document.createElement("tr");
    const link = document.createElement("a");
    const url = new URL("cases/" + encodeURIComponent(row.id), location.href);
    url.search = "";
    url.searchParams.set("project", data.project);
    link.href = url.href;
    link.textContent = row.id;
    const first = document.createElement("td");
    first.append(link);
    const a = row.attribution;
    tr.append(
      first,
      cell(row.verdict),
      cell(a ? a.status : "not attributed"),
      cell(a ? a.error_type : ""),
      cell(a && a.operation ? `${a.operation.name} (${a.operation.id})` : ""),
      cell(a ? a.confidence.toFixed(2) : ""),
      cell(a ? a.reason : ""),
    );
    body.append(tr);
  }
  document.getElementById("cases").hidden = data.cases.length === 0;
  document.getElementById("empty").hidden = data.cases.length !== 0;
  if (data.truncated) {
    const note = document.getElementById("truncated");
    note.textContent = `Only the first ${data.limit} cases are shown.`;
    note.hidden = false;
  }
})();
