/* Helpers shared by the dashboard pages. Every value from a run goes into the DOM as text
   (textContent), never as markup: run data is user input. */
"use strict";

const fd = {
  /** An element with attributes/properties and children (strings become text nodes). */
  el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key === "title") node.title = String(value);
      else if (key === "href") node.href = value;
      else node.setAttribute(key, String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  },

  /** "0", "120 ms", "1.5 s", "3m 12s", "2h 5m", "1d 3h" (like the server's format_duration). */
  duration(seconds) {
    if (seconds === null || seconds === undefined) return "–";
    if (seconds <= 0) return "0";
    if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
    if (seconds < 60) return `${(Math.round(seconds * 10) / 10).toString()} s`;
    const minutes = Math.floor(seconds / 60), hours = Math.floor(seconds / 3600);
    if (seconds < 3600) return `${minutes}m ${Math.floor(seconds % 60)}s`;
    if (seconds < 86400) return `${hours}h ${minutes % 60}m`;
    return `${Math.floor(hours / 24)}d ${hours % 24}h`;
  },

  clock(epochSeconds) {
    if (!epochSeconds) return "–";
    const date = new Date(epochSeconds * 1000);
    const pad = (n) => String(n).padStart(2, "0");
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
      `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  },

  cost(usd) { return `$${Number(usd || 0).toFixed(4)}`; },

  badge(status) { return fd.el("span", { class: `badge ${status}` }, status); },

  /** GET a JSON endpoint; throws an Error carrying the server's one-sentence reason. */
  async getJSON(url) {
    const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    let body = null;
    try { body = await response.json(); } catch (_) { body = null; }
    if (!response.ok) {
      throw new Error((body && body.error) || `The dashboard answered ${response.status}.`);
    }
    return body;
  },

  problem(message) {
    const box = document.getElementById("problem");
    box.hidden = !message;
    box.textContent = message || "";
  },

  stamp() {
    document.getElementById("updated").textContent = `updated ${fd.clock(Date.now() / 1000)}`;
  },
};
