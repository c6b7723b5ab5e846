// What every console page shares: the page's context, calls to the JSON API (the same
// endpoints, keys and project rules as any other client: the browser's cookie signs them),
// and small builders that put data on the page as text only (never as markup).
"use strict";

window.MT = (function () {
  const ctx = JSON.parse(document.getElementById("memtrace-data").textContent);
  const root = new URL(ctx.base + "../", location.href); // the service's root, e.g. /
  const PAGES = [
    ["projects", "Projects", false],
    ["dashboard", "Dashboard", true],
    ["cases", "Cases", true],
    ["sessions", "Sessions", true],
    ["prompts", "Prompts", true],
    ["audits", "Audits", true],
    ["jobs", "Jobs", true],
  ];

  // An element with attributes and children; strings become text nodes.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // A console page's URL: /ui/<page>[/<name>]?project=...&<params>.
  function page(name, params, sub) {
    const url = new URL(ctx.base + name + (sub ? "/" + encodeURIComponent(sub) : ""), location.href);
    const all = { project: ctx.project, ...params };
    for (const [key, value] of Object.entries(all)) {
      if (value !== null && value !== undefined && value !== "") url.searchParams.set(key, value);
    }
    return url.href;
  }

  function caseUrl(id, project) {
    const url = new URL(ctx.base + "cases/" + encodeURIComponent(id), location.href);
    url.searchParams.set("project", project || ctx.project);
    return url.href;
  }

  // The page of a unit or an operation ("units" or "operations").
  function nodeUrl(kind, id) {
    const url = new URL(ctx.base + kind + "/" + encodeURIComponent(id), location.href);
    url.searchParams.set("project", ctx.project);
    return url.href;
  }

  // A call to the JSON API; rejects with the API's message on an error answer.
  async function api(path, params, init) {
    const url = new URL(path, root);
    const all = { project: ctx.project, ...params };
    for (const [key, value] of Object.entries(all)) {
      if (value !== null && value !== undefined && value !== "") url.searchParams.set(key, value);
    }
    const options = { ...(init || {}) };
    if (options.json !== undefined) {
      options.method = options.method || "POST";
      options.headers = { "Content-Type": "application/json" };
      options.body = JSON.stringify(options.json);
      delete options.json;
    }
    const response = await fetch(url, options);
    if (!response.ok) {
      let message = `${response.status}`;
      try {
        const body = await response.json();
        message = `${response.status} ${body.error}: ${body.message}`;
      } catch (ignored) { /* not JSON: the status says enough */ }
      throw new Error(message);
    }
    return options.raw ? response : response.json();
  }

  function fail(error) {
    const banner = document.getElementById("error");
    banner.textContent = String(error.message || error);
    banner.hidden = false;
  }

  function table(columns, rows, id) {
    const head = el("tr", {}, columns.map(([label]) => el("th", { scope: "col", text: label })));
    const body = rows.map((row) =>
      el("tr", {}, columns.map(([, cell]) => {
        const value = cell(row);
        return el("td", {}, value instanceof Node ? value : value ?? "");
      })),
    );
    // In a box of its own that scrolls sideways, so a wide table never widens the page.
    return el("div", { class: "table-wrap" }, el("table", { id }, el("thead", {}, head), el("tbody", {}, body)));
  }

  function link(href, text) {
    return el("a", { href, text });
  }

  function when(value) {
    return value ? String(value).slice(0, 19).replace("T", " ") : "";
  }

  function percent(share) {
    return share === null || share === undefined ? "" : `${(100 * share).toFixed(1)}%`;
  }

  // A bar per row, its length the row's share of the largest (drawn with CSSOM widths, which
  // the pages' style policy allows; no inline style attribute).
  function bars(rows, label, count, href) {
    const most = Math.max(1, ...rows.map(count));
    return el("ul", { class: "bars" }, rows.map((row) => {
      const bar = el("span", { class: "bar" });
      bar.style.width = `${(100 * count(row)) / most}%`;
      const name = href ? link(href(row), label(row)) : el("span", { text: label(row) });
      return el("li", {}, el("span", { class: "bar-label" }, name), el("span", { class: "bar-track" }, bar),
        el("span", { class: "bar-count", text: count(row) }));
    }));
  }

  function section(title, ...children) {
    return el("section", { class: "panel" }, el("h2", { text: title }), ...children);
  }

  function mount(...children) {
    const content = document.getElementById("content");
    // replaceChildren would write a null as the text "null".
    content.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
    content.setAttribute("aria-busy", "false");
    document.body.dataset.ready = "true";
  }

  (function header() {
    const nav = document.getElementById("nav");
    for (const [name, label, needsProject] of PAGES) {
      if (needsProject && !ctx.project) continue;
      const a = link(page(name, {}), label);
      if (name === ctx.page) a.setAttribute("aria-current", "page");
      nav.append(a);
    }
    if (ctx.project) document.getElementById("project-name").textContent = `project ${ctx.project}`;
    document.title = `MemTrace · ${ctx.title}${ctx.project ? " · " + ctx.project : ""}`;
    document.getElementById("title").textContent = ctx.title;
  })();

  return { ctx, el, page, caseUrl, nodeUrl, api, fail, table, link, when, percent, bars, section, mount };
})();
