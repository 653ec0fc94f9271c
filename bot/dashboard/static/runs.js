/* The runs page: recent runs from /api/runs, waiting approvals first, filterable by status and
   route; who wrote and their first words; today's spend against the budget; inside
   `frontdesk run`, buttons that answer a waiting approval (POST with the CSRF token);
   refreshed every few seconds. */
"use strict";

const REFRESH_MS = 3000;
const COLUMNS = 10;
const params = new URLSearchParams(location.search);
let csrf = "";

async function answer(runId, option, button) {
  button.disabled = true;
  try {
    const response = await fetch(`/api/runs/${encodeURIComponent(runId)}/answer`, {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ answer: option }),
    });
    let body = null;
    try { body = await response.json(); } catch (_) { body = null; }
    fd.problem(response.ok ? null : ((body && (body.message || body.error)) ||
                                     `The dashboard answered ${response.status}.`));
  } catch (error) {
    fd.problem(error.message);
  }
  refresh();
}

function spendText(spend) {
  if (!spend) return "";
  const budget = spend.budget_usd === null ? "no daily budget"
    : `of ${fd.cost(spend.budget_usd)} budget`;
  return ` · today ${fd.cost(spend.spent_usd)} ${budget}`;
}

function fillSelect(select, values, chosen) {
  const keep = select.options[0];
  select.replaceChildren(keep);
  for (const value of values) {
    select.append(fd.el("option", { value, selected: value === chosen }, value));
  }
  if (chosen && !values.includes(chosen)) {
    select.append(fd.el("option", { value: chosen, selected: true }, chosen));
  }
}

function row(run, canAnswer) {
  const waiting = run.status === "waiting";
  const tokens = `${run.input_tokens} / ${run.output_tokens}`;
  const roles = Object.entries(run.calls_by_role).map(([role, n]) => `${role} ${n}`).join(", ");
  const status = fd.el("td", {}, fd.badge(run.status));
  if (waiting) status.append(fd.el("span", { class: "flag" }, "waiting for approval"));
  const link = fd.el("a", { href: `/runs/${encodeURIComponent(run.id)}` }, run.id);
  const main = fd.el("tr", { class: `run ${run.status}`, dataset: { runId: run.id, status: run.status } },
    fd.el("td", {}, fd.clock(run.started_at)),
    fd.el("td", { class: "from", title: run.words || "" },
      fd.el("span", { class: "who" }, run.who || "–"),
      run.words ? fd.el("span", { class: "words" }, run.words) : null),
    fd.el("td", {}, run.workflow),
    fd.el("td", {}, run.route || "–"),
    status,
    fd.el("td", { class: "num" }, fd.duration(run.duration_s) + (run.ended_at ? "" : " …")),
    fd.el("td", { class: "num", title: roles || "none" }, String(run.model_calls)),
    fd.el("td", { class: "num" }, tokens),
    fd.el("td", { class: "num" }, fd.cost(run.cost_usd)),
    fd.el("td", { class: "id" }, link));
  main.addEventListener("click", (event) => {
    if (event.target.tagName !== "A") location.href = link.href;
  });
  const rows = [main];
  if (waiting && run.question) {
    const options = run.options.length && !canAnswer ? `  [${run.options.join(" / ")}]` : "";
    const cell = fd.el("td", { colspan: COLUMNS }, fd.el("span", { class: "q" }, run.question + options));
    if (canAnswer) {
      const bar = fd.el("span", { class: "answers" });
      for (const option of run.options) {
        const button = fd.el("button", { type: "button", class: "answer", dataset: { option } }, option);
        button.addEventListener("click", (event) => {
          event.stopPropagation();
          answer(run.id, option, button);
        });
        bar.append(button);
      }
      cell.append(bar);
    }
    rows.push(fd.el("tr", { class: "question", dataset: { runId: run.id } }, cell));
  }
  if (run.error) {
    rows.push(fd.el("tr", { class: "question" },
      fd.el("td", { colspan: COLUMNS }, fd.el("span", { class: "error-text" }, run.error))));
  }
  return rows;
}

async function refresh() {
  const query = new URLSearchParams();
  for (const key of ["status", "route"]) if (params.get(key)) query.set(key, params.get(key));
  try {
    const data = await fd.getJSON(`/api/runs?${query}`);
    fillSelect(document.getElementById("status"), data.statuses, params.get("status") || "");
    fillSelect(document.getElementById("route"), data.routes, params.get("route") || "");
    csrf = data.csrf || "";
    document.querySelector("#runs tbody").replaceChildren(
      ...data.runs.flatMap((run) => row(run, data.can_answer)));
    document.getElementById("empty").hidden = data.runs.length > 0;
    document.getElementById("summary").textContent =
      `${data.runs.length} run${data.runs.length === 1 ? "" : "s"} shown · ` +
      `${data.waiting} waiting for an answer` + spendText(data.spend);
    fd.problem(null);
    fd.stamp();
    document.body.dataset.ready = "1";
  } catch (error) {
    fd.problem(error.message);
  }
}

for (const key of ["status", "route"]) {
  document.getElementById(key).addEventListener("change", (event) => {
    if (event.target.value) params.set(key, event.target.value); else params.delete(key);
    history.replaceState(null, "", params.toString() ? `/?${params}` : "/");
    refresh();
  });
}

refresh();
setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
