// One source page: its figures, their history, its new items and its records (dashboard.js's helpers).
"use strict";

const sourceId = decodeURIComponent(location.pathname.split("/").pop());

async function getJson(path) {
  const response = await fetch(path, {credentials: "same-origin"});
  if (!response.ok) throw new Error(`${response.status}: ${(await response.json()).error}`);
  return response.json();
}

// What became of the verdict this page sent ("" before one was sent): shown instead of the find's state.
let verdictAnswer = "";

// A person's verdict on a find discovery made (sources.verdicts: a label for `sourcewatch retrain classifier`).
async function sendVerdict(isSource) {
  const response = await fetch(`/api/v1/sources/${encodeURIComponent(sourceId)}/verdict`, {
    method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({is_source: isSource})});
  verdictAnswer = response.ok ? `verdict sent: ${isSource ? "a listing" : "not a listing"}`
                              : `verdict not sent: ${response.status} ${(await response.json()).error}`;
  document.getElementById("verdict-state").textContent = verdictAnswer;
}

document.getElementById("verdict-yes").addEventListener("click", () => sendVerdict(true));
document.getElementById("verdict-no").addEventListener("click", () => sendVerdict(false));

function showVerdict(source) {
  const panel = document.getElementById("panel-verdict");
  panel.hidden = source.kind !== "discovered";
  if (!panel.hidden) {
    document.getElementById("verdict-state").textContent =
      verdictAnswer || findState(source) || `found by discovery at P ${fmt(source.score, 2)}`;
  }
}

async function refreshSource() {
  const status = document.getElementById("status");
  try {
    const base = `/api/v1/sources/${encodeURIComponent(sourceId)}`;
    const [source, records, items, history] = await Promise.all([
      getJson(base), getJson(`${base}/records?limit=200`), getJson(`${base}/items?limit=500`),
      getJson(`${base}/figures`)]);
    document.getElementById("source-url").replaceChildren(safeLink(source.url));
    showVerdict(source);
    const names = ["kind", "score", "unsure", "verdict", "found_at", "no_list", "records", "new_items", "last_new_item", "timeliness",
                   "friendliness", "delay_h", "fetches_per_item", "updates_per_day", "peaks"];
    fillTable("panel-figures", [{key: "name", label: "figure"}, {key: "value", label: "value", num: true}],
              names.map((name) => ({name, value: fmt(source[name])})));
    const times = [...new Set(history.figures.map((row) => row.t))].sort((a, b) => a - b);
    const series = ["timeliness", "friendliness"].map((name) => {
      const byTime = new Map(history.figures.filter((row) => row.name === name).map((row) => [row.t, row.value]));
      return times.map((t) => (byTime.has(t) ? byTime.get(t) : null));
    });
    drawChart("panel-history", [{label: "timeliness", color: "#1f5fbf"}, {label: "friendliness", color: "#2e9e5b"}],
              [times, ...series]);
    fillTable("panel-changes", [
      {key: "first_seen", label: "first seen", render: (r) => new Date(r.first_seen).toLocaleString()},
      {key: "title", label: "item", cls: "title", render: (r) => safeLink(r.item_url, r.title)},
      {key: "date", label: "listed date", render: (r) => (r.date ? new Date(r.date).toLocaleDateString() : "–")},
      {key: "event_start", label: "event starts", render: (r) => (r.event_start ? new Date(r.event_start).toLocaleString() : "–")},
    ], items.items.slice().reverse(), "no new items since the page was first read");
    fillTable("panel-records", [
      {key: "title", label: "record", cls: "title", render: (r) => safeLink(r.item_url, r.title)},
      {key: "date", label: "date", render: (r) => (r.date ? new Date(r.date).toLocaleDateString() : "–")},
      {key: "event_start", label: "event starts", render: (r) => (r.event_start ? new Date(r.event_start).toLocaleString() : "–")},
      {key: "first_seen", label: "first seen", render: (r) => new Date(r.first_seen).toLocaleString()},
    ], records.records, "no records read from this page");
    status.className = "status";
    status.textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    status.className = "status error";
    status.textContent = `not updated: ${error.message}`;
  }
}

refreshSource();
setInterval(refreshSource, REFRESH_MS);
