// The dashboard: polls /api/v1/dashboard every few seconds and draws each panel (charts by uPlot).
// Text from crawled pages goes in with textContent only, and only http(s) links are made.
"use strict";

const REFRESH_MS = 5000;
const charts = {};

function fmt(value, digits = 3) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits);
  return String(value);
}

function safeLink(url, text) {
  const cell = document.createElement("span");
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") {
      const a = document.createElement("a");
      a.href = parsed.href;
      a.textContent = text || url;
      a.rel = "noopener noreferrer";
      return a;
    }
  } catch (e) { /* not a URL: shown as text */ }
  cell.textContent = text || url;
  return cell;
}

// What is known of a find: a person's verdict, or that discovery was unsure of it (a find to check).
function findState(source) {
  if (source.verdict === true) return "a listing (verdict)";
  if (source.verdict === false) return "not a listing (verdict)";
  return source.unsure ? `to check (P ${fmt(source.score, 2)})` : "";
}

// columns: [{key, label, num?, render?(row) -> Node|string}]
function fillTable(panelId, columns, rows, emptyText) {
  const table = document.querySelector(`#${panelId} table`);
  table.replaceChildren();
  const old = document.querySelector(`#${panelId} .empty`);
  if (old) old.remove();
  if (!rows || rows.length === 0) {
    const note = document.createElement("div");
    note.className = "empty";
    note.textContent = emptyText || "nothing in this range yet";
    table.after(note);
    return;
  }
  const head = table.createTHead().insertRow();
  for (const column of columns) {
    const th = document.createElement("th");
    th.textContent = column.label;
    if (column.num) th.className = "num";
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const column of columns) {
      const td = tr.insertCell();
      if (column.num) td.className = "num";
      if (column.cls) td.className = column.cls;
      const value = column.render ? column.render(row) : fmt(row[column.key]);
      if (value instanceof Node) td.appendChild(value); else td.textContent = value;
    }
  }
}

function drawChart(panelId, series, data) {
  const holder = document.querySelector(`#${panelId} .plot`);
  const width = Math.max(300, holder.clientWidth || 440);
  if (!charts[panelId]) {
    const opts = {
      width, height: 200,
      series: [{}, ...series.map((s) => ({label: s.label, stroke: s.color, width: 2, points: {show: true, size: 4}}))],
      axes: [{}, {size: 55}],
      scales: {x: {time: true}},
    };
    charts[panelId] = new uPlot(opts, data, holder);
  } else {
    charts[panelId].setData(data);
  }
}

function column(rows, key, scale = 1) {
  return rows.map((row) => (row[key] === null ? null : row[key] * scale));
}

function render(d) {
  const step = d.step;
  const t = (rows) => rows.map((row) => row.t);
  drawChart("panel-throughput", [{label: "pages/s", color: "#1f5fbf"}],
            [t(d.fetches), column(d.fetches, "pages", 1 / step)]);
  drawChart("panel-latency", [{label: "p50", color: "#2e9e5b"}, {label: "p99", color: "#d9822b"}],
            [t(d.fetches), column(d.fetches, "p50_ms"), column(d.fetches, "p99_ms")]);
  drawChart("panel-new-items", [{label: `items per ${step}s`, color: "#8e44ad"}], [t(d.new_items), column(d.new_items, "items")]);
  drawChart("panel-revisits", [{label: "decisions", color: "#7a8499"}, {label: "fetches", color: "#c0392b"}],
            [t(d.revisits), column(d.revisits, "decisions"), column(d.revisits, "fetches")]);
  fillTable("panel-errors", [{key: "kind", label: "kind"}, {key: "n", label: "fetches", num: true}], d.errors,
            "no fetch errors in this range");
  const lag = typeof d.lag === "string" ? [] : Object.entries(d.lag).map(([topic, lag]) => ({topic, lag}));
  fillTable("panel-lag", [{key: "topic", label: "topic"}, {key: "lag", label: "messages behind", num: true}], lag,
            typeof d.lag === "string" ? d.lag : "no committed offsets yet");
  fillTable("panel-discovery", [
    {key: "end", label: "ended by"}, {key: "episodes", label: "episodes", num: true},
    {key: "found", label: "found", num: true}, {key: "clicks", label: "clicks", num: true},
    {key: "unit_cost", label: "unit cost", num: true, render: (r) => fmt(r.unit_cost, 2)},
  ], d.discovery, "no discovery episodes in this range");
  fillTable("panel-reading", [{key: "name", label: "counter"}, {key: "n", label: "total", num: true}], d.reading);
  fillTable("panel-sources", [
    {key: "url", label: "source page", render: (r) => {
      const a = document.createElement("a"); a.href = `/sources/${encodeURIComponent(r.id)}`; a.textContent = r.url; return a; }},
    {key: "unsure", label: "find", render: findState},
    {key: "records", label: "records", num: true}, {key: "no_list", label: "no list: why", render: (r) => r.no_list || ""},
    {key: "new_items", label: "new items", num: true},
    {key: "timeliness", label: "timeliness", num: true}, {key: "friendliness", label: "friendliness", num: true},
    {key: "delay_h", label: "delay (h)", num: true, render: (r) => fmt(r.delay_h, 1)},
    {key: "fetches_per_item", label: "fetches/item", num: true, render: (r) => fmt(r.fetches_per_item, 1)},
    {key: "updates_per_day", label: "updates/day", num: true, render: (r) => fmt(r.updates_per_day, 2)},
    {key: "peaks", label: "rhythm peaks"},
  ], d.sources, "no source pages found or watched yet");
  fillTable("panel-latest", [
    {key: "first_seen", label: "first seen", render: (r) => new Date(r.first_seen).toLocaleString()},
    {key: "title", label: "item", cls: "title", render: (r) => safeLink(r.item_url, r.title)},
    {key: "source_url", label: "source page", render: (r) => safeLink(r.source_url)},
  ], d.latest_items, "no new items in this range");
}

// The sites discovery gave up on, each with a field for its listing page's URL and two answers. Drawn again
// only when the list changed and no answer is being typed: a refresh must not wipe what a person writes.
let gaveUpShown = "";

async function sendSiteVerdict(row, sourceUrl, cell) {
  const response = await fetch("/api/v1/sites/verdict", {
    method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({homepage: row.homepage, source_url: sourceUrl})});
  cell.replaceChildren();
  cell.textContent = response.ok ? (sourceUrl ? `sent: watching ${sourceUrl}` : "sent: no listing here")
                                 : `not sent: ${response.status} ${(await response.json()).error}`;
}

function siteAnswer(row) {
  const cell = document.createElement("span");
  const input = document.createElement("input");
  input.type = "url";
  input.placeholder = "its listing page, https://…";
  const watch = document.createElement("button");
  watch.textContent = "Watch it";
  watch.addEventListener("click", () => {
    if (input.value.trim()) sendSiteVerdict(row, input.value.trim(), cell);
  });
  const none = document.createElement("button");
  none.textContent = "None here";
  none.addEventListener("click", () => sendSiteVerdict(row, null, cell));
  cell.append(input, watch, none);
  return cell;
}

function showGaveUp(rows) {
  const panel = document.getElementById("panel-gave-up");
  const typing = [...panel.querySelectorAll("input")].some((input) => input.value || input === document.activeElement);
  const shown = JSON.stringify(rows);
  if (typing || shown === gaveUpShown) return;
  gaveUpShown = shown;
  fillTable("panel-gave-up", [
    {key: "homepage", label: "site", render: (r) => safeLink(r.homepage)},
    {key: "end", label: "ended by"}, {key: "clicks", label: "clicks", num: true},
    {key: "reason", label: "why", cls: "title"},
    {key: "ended_at", label: "when", render: (r) => new Date(r.ended_at).toLocaleString()},
    {key: "answer", label: "its listing", render: siteAnswer},
  ], rows, "no site waits for a verdict");
}

async function refresh() {
  const status = document.getElementById("status");
  const hours = document.getElementById("range").value;
  try {
    const response = await fetch(`/api/v1/dashboard?hours=${hours}`, {credentials: "same-origin"});
    if (!response.ok) throw new Error(`${response.status}: ${(await response.json()).error}`);
    const data = await response.json();
    render(data);
    showGaveUp(data.gave_up);
    status.className = "status";
    status.textContent = `updated ${new Date().toLocaleTimeString()} · ${data.query_ms} ms`;
  } catch (error) {
    status.className = "status error";
    status.textContent = `not updated: ${error.message}`;
  }
}

// The overview page boots here; a source's page (source.js) uses the helpers above.
if (document.getElementById("range")) {
  document.getElementById("range").addEventListener("change", refresh);
  refresh();
  setInterval(refresh, REFRESH_MS);
}
