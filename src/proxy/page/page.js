// toolmend's live page. It polls /events and /metrics and builds every node with textContent:
// tool input is untrusted model output, so nothing from the server is ever parsed as HTML.
"use strict";

const POLL_MS = 1000;
const MAX_CALLS = 200;
const MAX_LISTED = 50;
const KNOWN_OUTCOMES = ["valid", "repaired", "refused", "invalid"];

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");
let since = 0;

/** An element with attributes and children (strings become text nodes, never markup). */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null) continue;
    if (name === "class") node.className = value;
    else if (name === "title") node.title = value;
    else node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function clock(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function text(value) {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function reasonText(reason) {
  if (!reason) return "";
  if (typeof reason === "string") return reason;
  let out = [reason.code, reason.message].filter(Boolean).join(": ");
  if (reason.position !== undefined && reason.position !== null) out += ` (at byte ${reason.position})`;
  return out;
}

// ---- the raw input with every edit's byte span highlighted ----

/**
 * Edit spans are byte offsets into the UTF-8 input. The text is encoded once, cut at every span
 * edge, and each piece decoded on its own, so multi-byte characters land in the right mark.
 * Nested spans nest as marks; a span that crosses its parent's end goes on in a second piece.
 */
function highlighted(raw, edits) {
  const bytes = encoder.encode(raw);
  const clamp = (n) => Math.max(0, Math.min(bytes.length, Number(n) || 0));
  const spans = edits.map((edit, index) => {
    const start = clamp(edit.span && edit.span[0]);
    return { index, edit, start, end: Math.max(start, clamp(edit.span && edit.span[1])) };
  });
  const points = [...new Set([0, bytes.length, ...spans.flatMap((s) => [s.start, s.end])])].sort((a, b) => a - b);
  const root = el("pre", { class: "input raw" });
  const stack = [{ node: root, end: Infinity }];
  let reopen = [];
  for (let p = 0; p < points.length; p++) {
    const at = points[p];
    while (stack.length > 1 && stack[stack.length - 1].end <= at) {
      const closed = stack.pop();
      if (closed.span.end > at) reopen.push(closed.span);
    }
    for (const span of spans.filter((s) => s.start === at && s.end === at)) {
      stack[stack.length - 1].node.append(mark(span, "insert"));
    }
    const starting = reopen.concat(spans.filter((s) => s.start === at && s.end > at));
    reopen = [];
    starting.sort((a, b) => b.end - a.end || a.index - b.index);
    for (const span of starting) {
      const parent = stack[stack.length - 1];
      const crosses = span.end > parent.end;
      const node = mark(span, crosses || span.start !== at ? "part" : "");
      parent.node.append(node);
      stack.push({ node, end: Math.min(span.end, parent.end), span });
    }
    if (p + 1 < points.length) {
      stack[stack.length - 1].node.append(decoder.decode(bytes.subarray(at, points[p + 1])));
    }
  }
  return root;
}

function mark(span, extra) {
  const { edit, index } = span;
  const where = span.start === span.end ? `at byte ${span.start}` : `bytes ${span.start}–${span.end}`;
  return el("mark", {
    class: ["edit", extra].filter(Boolean).join(" "),
    title: `${edit.kind} · ${where}${edit.pointer ? ` · ${edit.pointer}` : ""}`,
    "data-kind": edit.kind,
    "data-edit": index,
    "data-start": span.start,
    "data-end": span.end,
  });
}

function editRows(raw, edits, card) {
  const bytes = raw === null ? null : encoder.encode(raw);
  const body = el("tbody");
  edits.forEach((edit, index) => {
    const [start, end] = edit.span || [0, 0];
    let shown = "";
    if (bytes) shown = start === end ? "(insertion)" : decoder.decode(bytes.subarray(start, end));
    const row = el(
      "tr",
      { "data-edit": index },
      el("td", {}, el("span", { class: "chip" }, edit.kind)),
      el("td", { class: "num" }, start === end ? `${start}` : `${start}–${end}`),
      el("td", {}, el("code", {}, edit.pointer || "")),
      el("td", {}, el("code", { class: "excerpt" }, shown)),
    );
    const focus = (on) => card.querySelectorAll(`mark[data-edit="${index}"]`).forEach((m) => m.classList.toggle("focus", on));
    row.addEventListener("mouseenter", () => focus(true));
    row.addEventListener("mouseleave", () => focus(false));
    body.append(row);
  });
  return el(
    "table",
    { class: "edits" },
    el("thead", {}, el("tr", {}, el("th", {}, "edit"), el("th", {}, "bytes"), el("th", {}, "pointer"), el("th", {}, "raw text"))),
    body,
  );
}

function sentPane(event) {
  const redacted = event.raw === null || event.raw === undefined;
  if (event.outcome !== "repaired") {
    return el("p", { class: "muted" }, "Forwarded exactly as the model sent it.");
  }
  if (redacted && (event.input === null || event.input === undefined)) {
    return el("p", { class: "muted" }, "Input hidden (--redact-inputs).");
  }
  const sent = typeof event.sent === "string" ? event.sent : JSON.stringify(event.input);
  return el("pre", { class: "input sent" }, sent);
}

function callCard(event) {
  const edits = Array.isArray(event.edits) ? event.edits : [];
  const kinds = [...new Set(edits.map((e) => e.kind))];
  const raw = typeof event.raw === "string" ? event.raw : null;
  const card = el("article", {
    class: `call outcome-${String(event.outcome).replace(/[^a-z_]/gi, "")}`,
    "data-event-id": event.id,
    "data-tool-use-id": event.tool_use_id,
    "data-outcome": event.outcome,
  });
  const head = el(
    "header",
    {},
    el("time", { datetime: event.time, title: event.time }, clock(event.time)),
    el("span", { class: "tool" }, text(event.tool) || "(no tool name)"),
    el("span", { class: "badge" }, text(event.outcome)),
    event.kind !== event.outcome ? el("span", { class: "muted" }, text(event.kind)) : null,
    ...kinds.map((kind) => el("span", { class: "chip" }, kind)),
  );
  card.append(head);
  const reason = reasonText(event.reason);
  if (reason) card.append(el("p", { class: "reason" }, reason));
  const rawPane = raw === null ? el("p", { class: "muted" }, "Input hidden (--redact-inputs).") : highlighted(raw, edits);
  const details = el(
    "details",
    { open: "" },
    el("summary", {}, `input · ${edits.length} edit${edits.length === 1 ? "" : "s"}`),
    el(
      "div",
      { class: "panes" },
      el("section", {}, el("h3", {}, "as the model sent it"), rawPane),
      el("section", {}, el("h3", {}, "what went out"), sentPane(event)),
    ),
  );
  if (edits.length) details.append(editRows(raw, edits, card));
  card.append(details);
  return card;
}

// ---- strict injection and other events ----

function strictItem(event) {
  const status = event.kind.replace(/^strict_/, "");
  const tools = Array.isArray(event.tools) ? event.tools.join(", ") : text(event.tool);
  return el(
    "li",
    { class: `strict strict-${status.replace(/[^a-z_]/gi, "")}`, "data-event-id": event.id },
    el("time", { datetime: event.time }, clock(event.time)),
    el("span", { class: "badge" }, status),
    el("span", { class: "tool" }, tools),
    event.reason ? el("span", { class: "reason" }, reasonText(event.reason)) : null,
  );
}

function otherItem(event) {
  const fields = Object.entries(event)
    .filter(([key]) => !["id", "time", "kind"].includes(key))
    .map(([key, value]) => `${key}: ${text(value)}`)
    .join(" · ");
  return el(
    "li",
    { "data-event-id": event.id },
    el("time", { datetime: event.time }, clock(event.time)),
    el("span", { class: "badge" }, event.kind),
    el("span", { class: "fields" }, fields),
  );
}

function prepend(container, node, limit) {
  container.prepend(node);
  while (container.children.length > limit) container.lastElementChild.remove();
  document.getElementById(`${container.id}-empty`).hidden = true;
}

function show(event) {
  if (typeof event.outcome === "string") prepend(document.getElementById("calls"), callCard(event), MAX_CALLS);
  else if (String(event.kind).startsWith("strict_")) prepend(document.getElementById("strict"), strictItem(event), MAX_LISTED);
  else prepend(document.getElementById("other"), otherItem(event), MAX_LISTED);
}

// ---- counts from /metrics ----

/** `name{label="value",...} number` lines of the Prometheus text format. */
function samples(metricsText, name) {
  const out = [];
  for (const line of metricsText.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = {};
    const close = line.lastIndexOf("}");
    const labelText = close > 0 ? line.slice(name.length + 1, close) : "";
    for (const m of labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[m[1]] = m[2].replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    const value = Number(line.slice(close > 0 ? close + 1 : name.length).trim().split(/\s+/)[0]);
    if (!Number.isNaN(value)) out.push({ labels, value });
  }
  return out;
}

function showCounts(metricsText) {
  const perTool = new Map();
  const outcomes = new Set(KNOWN_OUTCOMES);
  for (const { labels, value } of samples(metricsText, "toolmend_tool_calls_total")) {
    const counts = perTool.get(labels.tool) || new Map();
    counts.set(labels.outcome, (counts.get(labels.outcome) || 0) + value);
    perTool.set(labels.tool, counts);
    outcomes.add(labels.outcome);
  }
  const columns = [...KNOWN_OUTCOMES, ...[...outcomes].filter((o) => !KNOWN_OUTCOMES.includes(o)).sort()];
  const table = document.getElementById("tools");
  table.tHead.replaceChildren(el("tr", {}, el("th", {}, "tool"), el("th", {}, "calls"), ...columns.map((c) => el("th", {}, c))));
  const total = new Map();
  const rows = [...perTool.entries()].sort((a, b) => a[0].localeCompare(b[0])).map(([tool, counts]) => {
    const calls = [...counts.values()].reduce((a, b) => a + b, 0);
    columns.forEach((c) => total.set(c, (total.get(c) || 0) + (counts.get(c) || 0)));
    return el(
      "tr",
      { "data-tool": tool },
      el("td", {}, el("code", {}, tool)),
      el("td", { class: "num", "data-outcome": "calls" }, calls),
      ...columns.map((c) => el("td", { class: `num ${counts.get(c) ? `has-${c.replace(/[^a-z_]/gi, "")}` : "zero"}`, "data-outcome": c }, counts.get(c) || 0)),
    );
  });
  table.tBodies[0].replaceChildren(...rows);
  document.getElementById("tools-empty").hidden = rows.length > 0;

  const calls = [...total.values()].reduce((a, b) => a + b, 0);
  const strict = new Map(samples(metricsText, "toolmend_strict_tools_total").map((s) => [s.labels.result, s.value]));
  const dropped = samples(metricsText, "toolmend_otel_dropped_total").reduce((a, s) => a + s.value, 0);
  const tiles = [
    ["calls", calls],
    ...columns.filter((c) => c !== "valid").map((c) => [c, total.get(c) || 0]),
    ["strict injected", strict.get("injected") || 0],
    ["strict skipped", strict.get("skipped") || 0],
    ["strict rejected", strict.get("rejected") || 0],
  ];
  if (dropped) tiles.push(["OTLP dropped", dropped]);
  document.getElementById("totals").replaceChildren(
    ...tiles.map(([label, value]) => el("div", { class: "tile", "data-total": label }, el("strong", {}, value), el("span", {}, label))),
  );
  return calls;
}

// ---- polling ----

let lastCalls = 0;

function restarted() {
  since = 0;
  for (const id of ["calls", "strict", "other"]) {
    document.getElementById(id).replaceChildren();
    document.getElementById(`${id}-empty`).hidden = false;
  }
}

function setStatus(ok, message) {
  const status = document.getElementById("status");
  status.className = `status ${ok ? "ok" : "down"}`;
  status.textContent = message;
}

async function poll() {
  try {
    const response = await fetch(`/events?since=${since}`, { cache: "no-store" });
    if (!response.ok) throw new Error(`/events answered ${response.status}`);
    const { events } = await response.json();
    for (const event of events) {
      since = Math.max(since, event.id);
      show(event);
    }
    const metrics = await fetch("/metrics", { cache: "no-store" });
    if (metrics.ok) {
      const calls = showCounts(await metrics.text());
      // Fewer calls than before: the sidecar restarted and its event ids start again at 1.
      if (calls < lastCalls) restarted();
      lastCalls = calls;
    }
    setStatus(true, `live · ${clock(new Date().toISOString())}`);
  } catch (error) {
    setStatus(false, `sidecar not reachable: ${error.message}`);
  }
  setTimeout(poll, POLL_MS);
}

async function start() {
  try {
    const health = await (await fetch("/healthz", { cache: "no-store" })).json();
    document.getElementById("version").textContent = `v${health.version}`;
  } catch (_) {
    // The status line reports an unreachable sidecar on the first poll.
  }
  poll();
}

start();
