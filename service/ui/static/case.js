// The case view: draws the ancestor subgraph of a case's answer with vis-network and marks what
// the attribution blamed. Every piece of data reaches the page through textContent or as a
// vis-network label (drawn on a canvas as plain text): nothing from the graph becomes markup.
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("memtrace-data").textContent);
  const theCase = data.case;
  const subgraph = data.subgraph;

  // Fills by kind (ColorBrewer Set2/Pastel1): operations saturated, units pale.
  const OP_FILL = {
    ingest: "#b3b3b3", extraction: "#66c2a5", update: "#fc8d62", deletion: "#e78ac3",
    embedding: "#a6d854", retrieval: "#8da0cb", response: "#ffd92f", evaluation: "#e5c494",
    other: "#cccccc",
  };
  const UNIT_FILL = {
    message: "#e5f5e0", memory: "#deebf7", query: "#fff7bc", context: "#efedf5",
    answer: "#fde0dd", prompt: "#f0f0f0", tombstone: "#d9d9d9", other: "#ffffff",
  };
  const MARK = { blamed: "#d62728", path: "#ff7f0e", answer: "#1f77b4", evidence: "#2ca02c" };
  const EDGE = "#9aa3b2";
  const LABEL_PX = 14; // a node label's font size at zoom 1
  const MIN_LABEL_PX = 11; // the smallest a label is drawn when the graph is fitted
  const SELECTED = "#1d2330";
  // A selected node keeps its fill and gets a dark border (blue would read as "the answer").
  const selected = (fill) => ({ background: fill, border: SELECTED });

  const keyOf = (type, id) => (type === "operation" ? "o:" : "u:") + id;
  const byKey = new Map();
  for (const node of subgraph ? subgraph.nodes : []) byKey.set(keyOf(node.type, node.id), node);
  const edgeList = (subgraph ? subgraph.edges : []).map((e) => {
    const op = keyOf("operation", e.operation);
    const unit = keyOf("unit", e.unit);
    const consumes = e.type === "CONSUMES";
    // Drawn in the direction information flows: a consumed unit points at its operation.
    return {
      id: `${e.type}|${e.operation}|${e.unit}|${e.position}`,
      from: consumes ? unit : op,
      to: consumes ? op : unit,
      type: e.type,
      position: e.position,
    };
  });

  function $(id) {
    return document.getElementById(id);
  }

  function setText(id, value) {
    $(id).textContent = value === null || value === undefined ? "" : String(value);
  }

  function shorten(value, max) {
    const flat = String(value || "").replace(/\s+/g, " ").trim();
    return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
  }

  // Evidence-path ids do not say whether they name a unit or an operation: ask the graph.
  function resolve(id) {
    if (byKey.has(keyOf("operation", id))) return keyOf("operation", id);
    if (byKey.has(keyOf("unit", id))) return keyOf("unit", id);
    return null;
  }

  function rolesByKey(attribution) {
    const roles = new Map();
    const add = (key, role) => {
      if (key === null || !byKey.has(key)) return;
      if (!roles.has(key)) roles.set(key, []);
      roles.get(key).push(role);
    };
    if (theCase.answer_unit) add(keyOf("unit", theCase.answer_unit), "answer");
    for (const id of theCase.evidence_units) add(keyOf("unit", id), "evidence");
    if (attribution) {
      for (const id of attribution.evidence_path) add(resolve(id), "path");
      if (attribution.operation) add(keyOf("operation", attribution.operation.id), "blamed");
    }
    return roles;
  }

  function pathPairs(attribution) {
    const pairs = new Set();
    const path = attribution ? attribution.evidence_path.map(resolve) : [];
    for (let i = 0; i + 1 < path.length; i++) {
      if (path[i] && path[i + 1]) {
        pairs.add(path[i] + "\n" + path[i + 1]);
        pairs.add(path[i + 1] + "\n" + path[i]);
      }
    }
    return pairs;
  }

  function visNode(key, roles) {
    const n = byKey.get(key);
    const isOp = n.type === "operation";
    const shortName = String(n.name || n.kind || "").split(".").pop();
    let label = isOp
      ? `${shortName}\n${n.id}`
      : `${n.kind} ${n.id}\n${n.defined ? shorten(n.content, 34) : "(never defined)"}`;
    const fill = isOp ? OP_FILL[n.kind] || OP_FILL.other : UNIT_FILL[n.kind] || UNIT_FILL.other;
    const node = {
      id: key,
      label,
      shape: isOp ? "box" : "ellipse",
      // Operation names are single words (wrapping would split them); unit text wraps.
      widthConstraint: { maximum: isOp ? 240 : 150 },
      color: { background: fill, border: "#5b6475", highlight: selected(fill) },
      borderWidth: 1,
      font: { color: "#1d2330", size: LABEL_PX, face: "system-ui, sans-serif" },
      shapeProperties: { borderDashes: n.defined ? false : [5, 4] },
      shadow: false,
      roles: roles,
    };
    const mark = ["blamed", "path", "answer", "evidence"].find((r) => roles.includes(r));
    if (mark === "blamed") {
      node.color = { background: MARK.blamed, border: "#7f0000", highlight: selected(MARK.blamed) };
      node.borderWidth = 5;
      node.font = { color: "#ffffff", size: 16, face: "system-ui, sans-serif" };
      node.shadow = { enabled: true, color: "rgba(214,39,40,0.6)", size: 18, x: 0, y: 0 };
      label = `BLAMED · ${label}`;
    } else if (mark) {
      node.color = { background: fill, border: MARK[mark], highlight: selected(fill) };
      node.borderWidth = 4;
    }
    const tags = roles.filter((r) => r === "answer" || r === "evidence").map((r) => r.toUpperCase());
    node.label = tags.length ? `${tags.join(" · ")}\n${label}` : label;
    return node;
  }

  function visEdge(edge, pairs) {
    const onPath = pairs.has(edge.from + "\n" + edge.to);
    return {
      id: edge.id,
      from: edge.from,
      to: edge.to,
      arrows: { to: { enabled: true, scaleFactor: 0.6 } },
      color: { color: onPath ? MARK.path : EDGE, highlight: onPath ? MARK.path : SELECTED },
      width: onPath ? 4 : 1.2,
      dashes: false,
      onPath: onPath,
    };
  }

  function styledElements(attribution) {
    const roles = rolesByKey(attribution);
    const pairs = pathPairs(attribution);
    return {
      nodes: [...byKey.keys()].map((key) => visNode(key, roles.get(key) || [])),
      edges: edgeList.map((edge) => visEdge(edge, pairs)),
    };
  }

  // ---- header --------------------------------------------------------------------------------

  function renderCase() {
    document.title = `MemTrace · ${theCase.id}: ${shorten(theCase.question, 60)}`;
    setText("case-id", theCase.id);
    setText("project", theCase.project);
    setText("question", theCase.question);
    setText("expected", theCase.expected_answer);
    const answer = theCase.answer_unit ? byKey.get(keyOf("unit", theCase.answer_unit)) : null;
    const answerCut = answer ? cutNote(answer) : "";
    setText("given", answer ? answer.content + (answerCut ? ` (${answerCut})` : "") : "(no answer unit)");
    setText("verdict", theCase.verdict);
    $("verdict").classList.add(theCase.verdict);
    const list = new URL("../cases", location.href);
    list.searchParams.set("project", theCase.project);
    list.searchParams.set("verdict", "failed");
    $("list-link").href = list.href;
    // The console's pages, of this case's project (the bar is the console's: console.html).
    for (const a of document.querySelectorAll("#nav a[data-page]")) {
      const url = new URL("../" + a.dataset.page, location.href);
      url.searchParams.set("project", theCase.project);
      a.href = url.href;
    }
    setText("project-name", `project ${theCase.project}`);
    renderSessions();
    if (!subgraph) {
      showNote("This case names no answer unit: there is nothing to draw.");
    } else {
      const notes = [];
      if (subgraph.truncated) {
        const limit = subgraph.truncated_by === "bytes"
          ? `byte limit ${count(subgraph.byte_limit)}`
          : `node limit ${count(subgraph.node_limit)}`;
        notes.push(`Showing the ${subgraph.nodes.length} nearest ancestors of the answer; ` +
          `it has more (${limit}).`);
      }
      if (subgraph.cut_values) {
        notes.push(`${count(subgraph.cut_values)} long values are cut to their first ` +
          `${count(subgraph.value_chars)} characters (click a node to see which).`);
      }
      if (notes.length) showNote(notes.join(" "));
    }
  }

  // The sessions the case was asked in (usually one), each a link to its session page.
  function renderSessions() {
    const cell = $("session");
    cell.replaceChildren();
    if (!data.sessions.length) {
      cell.append(document.createTextNode("none named (its trace names no session or conversation)"));
      return;
    }
    data.sessions.forEach((id, i) => {
      const url = new URL("../sessions/" + encodeURIComponent(id), location.href);
      url.searchParams.set("project", theCase.project);
      const a = document.createElement("a");
      a.href = url.href;
      a.textContent = id;
      a.className = "session-link";
      if (i) cell.append(document.createTextNode(", "));
      cell.append(a);
    });
  }

  function count(n) {
    return Number(n).toLocaleString("en-US");
  }

  // What the subgraph left out of a node's values, in words ("" when nothing).
  function cutNote(n) {
    const cut = n.cut || {};
    const parts = [];
    if (cut.content !== undefined) {
      parts.push(`cut: ${count(subgraph.value_chars)} of ${count(cut.content)} characters`);
    }
    if (cut.attributes !== undefined) {
      parts.push(`attributes left out: ${count(cut.attributes)} characters`);
    }
    return parts.join(" · ");
  }

  function showNote(message) {
    setText("graph-note", message);
    $("graph-note").hidden = false;
  }

  // The prompt versions the blamed operation ran with (its CONSUMES edges to prompt units),
  // each linking to its prompt's page when the version is known.
  function promptsOf(opId) {
    const graph = data.subgraph;
    if (!graph) return ["unknown"];
    const prompts = new Set(graph.nodes.filter((n) => n.kind === "prompt").map((n) => n.id));
    const used = graph.edges
      .filter((e) => e.type === "CONSUMES" && e.operation === opId && prompts.has(e.unit))
      .map((e) => {
        const label = (data.prompt_versions || {})[e.unit];
        if (!label) return document.createTextNode(e.unit);
        const link = document.createElement("a");
        const url = new URL("../prompts/" + encodeURIComponent(label.slice(0, label.lastIndexOf("@"))), location.href);
        url.searchParams.set("project", theCase.project);
        link.href = url.href;
        link.textContent = label;
        return link;
      });
    return used.length ? used : ["none recorded"];
  }

  function renderAttribution() {
    const a = data.attribution;
    $("no-attribution").hidden = Boolean(a);
    $("attribution-facts").hidden = !a;
    $("attribute-button").textContent = a ? "Attribute again" : "Attribute";
    if (!a) return;
    setText("error-type", a.error_type || "none");
    setText("attribution-state", a.status);
    const op = a.operation;
    setText("blamed-operation", op ? `${op.name} (${op.id}, ${op.kind})` : "none");
    $("blamed-prompt").replaceChildren(...(op ? promptsOf(op.id) : ["none"]).flatMap(
      (part, i) => (i ? [", ", part] : [part])));
    setText("confidence", a.confidence.toFixed(2));
    setText("reason", a.reason);
    setText("decided-by", a.decided_by || "");
    for (const el of document.querySelectorAll(".decided-by")) el.hidden = !a.decided_by;
    const judge = a.judge.model ? `${a.judge.kind} (${a.judge.model})` : a.judge.kind;
    let judged = `${judge} · ${a.cost.llm_calls} LLM calls · ${a.cost.seconds.toFixed(3)} s`;
    if (a.judge.kind !== "heuristic") {
      judged += ` · ${a.judge.llm_verdicts ?? 0} LLM verdicts, ${a.judge.llm_failures ?? 0} failed calls`;
      if (a.judge.warning) judged += ` · ${a.judge.warning}`;
    }
    setText("judge", judged);
    const path = $("evidence-path");
    path.replaceChildren();
    for (const id of a.evidence_path) {
      const item = document.createElement("li");
      const chip = document.createElement("span");
      chip.textContent = id;
      item.append(chip);
      const key = resolve(id);
      if (key) {
        item.dataset.key = key;
        item.addEventListener("click", () => focusNode(key));
      } else {
        item.classList.add("off-graph");
        item.title = "not among the answer's ancestors";
      }
      path.append(item);
    }
  }

  // ---- side panel ----------------------------------------------------------------------------

  function neighbours(key) {
    const inputs = [];
    const outputs = [];
    for (const edge of edgeList) {
      if (edge.to === key) inputs.push(edge);
      if (edge.from === key) outputs.push(edge);
    }
    const ids = (edges, end) =>
      edges.sort((x, y) => x.position - y.position).map((e) => byKey.get(e[end]).id).join(", ");
    return { inputs: ids(inputs, "from"), outputs: ids(outputs, "to") };
  }

  function showNode(key) {
    const n = byKey.get(key);
    if (!n) return;
    const isOp = n.type === "operation";
    setText("panel-title", `${isOp ? "Operation" : "Unit"} ${n.id}`);
    $("panel-hint").hidden = true;
    const links = neighbours(key);
    const roles = (nodes && nodes.get(key) ? nodes.get(key).roles : []) || [];
    const facts = [
      ["kind", n.kind],
      ["name", n.name],
      ["system", n.system],
      ["session", n.session_id],
      ["time", n.ts],
      ["defined", isOp ? null : String(n.defined)],
      [isOp ? "consumes" : "produced by", links.inputs],
      [isOp ? "produces" : "consumed by", links.outputs],
      ["marked as", roles.join(", ")],
    ];
    const list = $("panel-facts");
    list.replaceChildren();
    for (const [term, value] of facts) {
      if (value === null || value === undefined || value === "") continue;
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      dd.textContent = value;
      list.append(dt, dd);
    }
    list.hidden = false;
    const hasContent = !isOp;
    $("panel-content-title").hidden = !hasContent;
    $("panel-content").hidden = !hasContent;
    setText("panel-content", hasContent ? (n.defined ? n.content : "(never defined)") : "");
    const cut = cutNote(n);
    $("panel-cut").hidden = !cut;
    setText("panel-cut", cut);
    const attrs = n.attributes && Object.keys(n.attributes).length ? n.attributes : null;
    $("panel-attributes-title").hidden = !attrs;
    $("panel-attributes").hidden = !attrs;
    setText("panel-attributes", attrs ? JSON.stringify(attrs, null, 2) : "");
  }

  function focusNode(key) {
    if (!network || !byKey.has(key)) return;
    network.selectNodes([key]);
    network.focus(key, { scale: 1.1, animation: { duration: 300 } });
    showNode(key);
  }

  // ---- graph ---------------------------------------------------------------------------------

  let network = null;
  let nodes = null;
  let edges = null;

  function draw() {
    const elements = styledElements(data.attribution);
    nodes = new vis.DataSet(elements.nodes);
    edges = new vis.DataSet(elements.edges);
    network = new vis.Network($("graph"), { nodes, edges }, {
      layout: {
        hierarchical: {
          enabled: true,
          direction: "LR",
          sortMethod: "directed",
          shakeTowards: "roots",
          levelSeparation: 205,
          nodeSpacing: 95,
          treeSpacing: 120,
        },
      },
      physics: false,
      interaction: { hover: true, keyboard: false },
      nodes: { margin: 8 },
      edges: { smooth: { type: "cubicBezier", forceDirection: "horizontal", roundness: 0.45 } },
    });
    network.on("click", (params) => {
      if (params.nodes.length) showNode(params.nodes[0]);
    });
    network.once("afterDrawing", () => {
      fitReadable();
      document.body.dataset.graphReady = "true";
    });
    window.addEventListener("resize", fitReadable);
    window.memtrace = { network, nodes, edges, keyOf, data, LABEL_PX, MIN_LABEL_PX };
  }

  // The whole graph in view, unless that would draw its labels smaller than MIN_LABEL_PX on the
  // screen (a 25-node graph fitted into a laptop window drew them at 6 px): then the zoom stays
  // at the readable one, the view moved from the graph's centre just enough to show what matters
  // (the blamed operation, else the answer), and the rest is a drag away.
  function fitReadable() {
    const least = MIN_LABEL_PX / LABEL_PX;
    network.fit({ animation: false, minZoomLevel: least });
    if (network.getScale() > least + 1e-3) return; // it all fitted
    const a = data.attribution;
    const blamed = a && a.operation ? keyOf("operation", a.operation.id) : null;
    const answer = theCase.answer_unit ? keyOf("unit", theCase.answer_unit) : null;
    const key = [blamed, answer].find((k) => k && byKey.has(k));
    if (!key) return;
    const box = $("graph").getBoundingClientRect();
    const at = network.canvasToDOM(network.getPosition(key));
    const margin = Math.min(120, box.width / 4, box.height / 4);
    const shift = (p, size) => (p < margin ? p - margin : p > size - margin ? p - (size - margin) : 0);
    const dx = shift(at.x, box.width);
    const dy = shift(at.y, box.height);
    if (!dx && !dy) return;
    const centre = network.getViewPosition();
    network.moveTo({
      position: { x: centre.x + dx / least, y: centre.y + dy / least }, scale: least, animation: false,
    });
  }

  function restyle() {
    const elements = styledElements(data.attribution);
    nodes.update(elements.nodes);
    edges.update(elements.edges);
    network.redraw();
  }

  // ---- attributing from the page --------------------------------------------------------------

  async function attribute() {
    const button = $("attribute-button");
    button.disabled = true;
    setText("attribute-status", "attributing…");
    const url = new URL("../../attribute/" + encodeURIComponent(theCase.id), location.href);
    url.searchParams.set("project", theCase.project);
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ refresh: Boolean(data.attribution), judge: $("judge-choice").value }),
      });
      const body = await response.json();
      if (!response.ok) {
        setText("attribute-status", `failed: ${response.status} ${body.message || ""}`);
        return;
      }
      data.attribution = body;
      renderAttribution();
      if (network) restyle();
      setText("attribute-status", "done");
    } catch (error) {
      setText("attribute-status", `failed: ${error}`);
    } finally {
      button.disabled = false;
    }
  }

  renderCase();
  renderAttribution();
  $("attribute-button").addEventListener("click", attribute);
  $("blamed-operation").addEventListener("click", (event) => {
    event.preventDefault();
    if (data.attribution && data.attribution.operation) {
      focusNode(keyOf("operation", data.attribution.operation.id));
    }
  });
  if (subgraph && subgraph.nodes.length) {
    draw();
  } else {
    document.body.dataset.graphReady = "true";
  }
})();
