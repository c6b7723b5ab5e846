// /ui/prompts/{name}: every version of one prompt (GET /prompts/{name}) with its text, where it
// came from and the failed cases that motivated it; a line diff between any two versions; and
// "optimise", which streams its progress (POST /prompts/{name}/optimize?stream=true).
"use strict";

(async function () {
  const { ctx, el, link, caseUrl, api, section, percent, mount, fail } = MT;

  // Lines of a and b as a diff: the longest common subsequence kept, the rest removed / added.
  function lineDiff(a, b) {
    const x = a.split("\n");
    const y = b.split("\n");
    const n = x.length;
    const m = y.length;
    const lcs = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    const out = [];
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) { out.push([" ", x[i]]); i++; j++; }
      else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) { out.push(["+", y[j]]); j++; }
      else { out.push(["-", x[i]]); i++; }
    }
    return el("pre", { class: "diff", id: "diff" }, out.map(([mark, line]) =>
      el("span", { class: mark === "+" ? "added" : mark === "-" ? "removed" : "same", text: `${mark} ${line}\n` })));
  }

  function versionPanel(v) {
    const rate = Object.entries(v.failures_by_error_type).map(([type, n]) => `${type} ${n}`).join(", ");
    const motivated = v.motivated_by.length
      ? el("span", {}, v.motivated_by.map((id, i) => [i ? ", " : "", link(caseUrl(id), id)]))
      : "none";
    return el("section", { class: "panel version", id: `version-${v.version}` },
      el("h2", { text: v.label }),
      el("dl", { class: "facts" },
        el("dt", { text: "operations" }), el("dd", { text: v.operations }),
        el("dt", { text: "failures" }), el("dd", { text: `${v.failures} (${percent(v.failure_rate)})` }),
        el("dt", { text: "optimised from" }), el("dd", { text: v.parent || "none" }),
        el("dt", { text: "motivated by" }), el("dd", {}, motivated),
        rate ? [el("dt", { text: "by error type" }), el("dd", { text: rate })] : null,
      ),
      el("pre", { class: "prompt-text", text: v.text }));
  }

  function diffPicker(versions) {
    const choose = (id, selected) => el("select", { id, "aria-label": id },
      versions.map((v) => el("option", { value: v.id, text: v.label, selected: v.id === selected })));
    const from = choose("diff-from", versions[Math.max(0, versions.length - 2)].id);
    const to = choose("diff-to", versions[versions.length - 1].id);
    const out = el("div", {});
    const show = () => {
      const a = versions.find((v) => v.id === from.value);
      const b = versions.find((v) => v.id === to.value);
      out.replaceChildren(lineDiff(a.text, b.text));
    };
    from.addEventListener("change", show);
    to.addEventListener("change", show);
    show();
    return section("Diff", el("div", { class: "filters" }, from, " → ", to), out);
  }

  function optimiser() {
    const status = el("p", { id: "optimise-status", role: "status", class: "note" });
    const result = el("div", { id: "optimise-result" });
    const button = el("button", { type: "button", id: "optimise", text: "Optimise the newest version" });
    button.addEventListener("click", async () => {
      button.disabled = true;
      status.textContent = "starting…";
      try {
        const response = await api(`prompts/${encodeURIComponent(ctx.name)}/optimize`, { stream: "true" }, { json: {}, raw: true });
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffered = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffered += decoder.decode(value, { stream: true });
          const lines = buffered.split("\n");
          buffered = lines.pop();
          for (const line of lines.filter(Boolean)) {
            const event = JSON.parse(line);
            if (event.event === "progress") status.textContent = `${event.stage}: ${event.done} / ${event.total}`;
            else if (event.event === "error") status.textContent = `failed: ${event.message}`;
            else if (event.event === "result") {
              status.textContent = `done: ${event.result.new_label} stored (reload to see it among the versions)`;
              result.replaceChildren(el("h3", { text: "why" }), el("p", { text: event.result.feedback_summary }),
                el("h3", { text: "diff" }), el("pre", { class: "diff", text: event.result.diff }));
            }
          }
        }
      } catch (error) {
        status.textContent = "";
        fail(error);
      } finally {
        button.disabled = false;
      }
    });
    return section("Optimise", el("p", { class: "note", text: "Proposes the next version from the failed cases blamed on the newest one, with the configured LLM, and stores it." }), button, status, result);
  }

  try {
    // A version of GET /prompts/{name} carries its counts too: one request is enough.
    const detail = await api(`prompts/${encodeURIComponent(ctx.name)}`);
    const versions = detail.versions;
    mount(optimiser(), versions.length > 1 ? diffPicker(versions) : null,
      ...[...versions].reverse().map(versionPanel));
  } catch (error) {
    fail(error);
  }
})();
