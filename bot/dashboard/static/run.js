/* One run's page: summary, timeline (one lane per node, one bar per visit), the graph with the
   path taken, the steps with their model and tool calls, the final state. A live run is polled
   from /api/runs/<id> until it ends. */
"use strict";

const POLL_RUNNING_MS = 1000;
const POLL_WAITING_MS = 4000;
const runId = decodeURIComponent(location.pathname.split("/").pop());
const pct = (x) => `${(Math.max(0, Math.min(1, x)) * 100).toFixed(3)}%`;

function summary(run, models) {
  const item = (label, value) => fd.el("div", { class: "item" },
    fd.el("span", { class: "label" }, label), fd.el("span", { class: "value" }, value));
  const roles = Object.entries(run.calls_by_role).map(([role, n]) => `${role} ${n}`).join(", ");
  const who = [run.meta.platform, run.meta.chat_id, run.meta.user].filter(Boolean).join(" · ");
  return [
    item("Workflow", run.workflow),
    item("Status", fd.badge(run.status)),
    item("Route", run.route || "–"),
    item("Started", fd.clock(run.started_at)),
    item("Duration", fd.duration(run.duration_s) + (run.ended_at ? "" : " so far")),
    item("Model calls", `${run.model_calls}${roles ? ` (${roles})` : ""}`),
    models.length ? item("Models", models.join(", ")) : null,
    item("Tokens in / out", `${run.input_tokens} / ${run.output_tokens}`),
    item("Cost", fd.cost(run.cost_usd)),
    who ? item("From", who) : null,
    run.meta.messages ? item("Answers", `messages ${run.meta.messages.join(", ")}`) : null,
  ].filter(Boolean);
}

function barTitle(bar) {
  const lines = [`${bar.node} — ${bar.status}`, `attempt ${bar.attempt}`,
    `from +${fd.duration(bar.start_s)} to +${fd.duration(bar.end_s)}`];
  if (bar.duration_s !== null) lines.push(`ran ${fd.duration(bar.duration_s)}`);
  if (bar.wrote.length) lines.push(`wrote ${bar.wrote.join(", ")}`);
  if (bar.error) lines.push(`error: ${bar.error}`);
  if (bar.retry_in !== null) lines.push(`retried after ${fd.duration(bar.retry_in)}`);
  if (bar.question) lines.push(`asked: ${bar.question}`);
  return lines.join("\n");
}

function barElement(bar) {
  const width = bar.x1 - bar.x0;
  const shown = bar.status === "waiting" || bar.status === "answered"
    ? (bar.status === "waiting" ? "waiting" : "waited")
    : fd.duration(bar.end_s - bar.start_s);
  const element = fd.el("div", {
    class: `bar ${bar.status}`, title: barTitle(bar),
    dataset: { node: bar.node, status: bar.status, attempt: bar.attempt },
  }, fd.el("span", { class: "bar-text" }, shown));
  element.style.left = pct(bar.x0);
  element.style.width = pct(width);
  if (width > 0 && bar.x_work < bar.x1) {
    // past the node's own work: the engine taking its result in (the end is when it did)
    const tail = fd.el("div", { class: "tail", title: "finished its work; result taken in at the bar's end" });
    tail.style.width = pct((bar.x1 - bar.x_work) / width);
    element.append(tail);
  }
  for (const call of bar.calls) {
    const mark = fd.el("i", {
      class: `call ${call.kind === "model_call" ? "model" : "tool"}${call.failed ? " failed" : ""}`,
      title: call.line + (call.error ? `\n${call.error}` : ""),
    });
    const from = width > 0 ? (call.x0 - bar.x0) / width : 0;
    const to = width > 0 ? (call.x1 - bar.x0) / width : 0;
    mark.style.left = pct(from);
    mark.style.width = pct(to - from);
    element.append(mark);
  }
  return element;
}

function timeline(data) {
  const box = document.getElementById("timeline");
  const axis = fd.el("div", { class: "track axis" });
  for (const tick of data.ticks) {
    const mark = fd.el("span", { class: "tick" }, tick.label);
    mark.style.left = pct(tick.x);
    axis.append(mark);
  }
  const breaks = () => data.breaks.map((gap) => {
    const band = fd.el("div", { class: "break", title: `nothing ran for ${gap.label}` });
    band.style.left = pct(gap.x0);
    band.style.width = pct(gap.x1 - gap.x0);
    return band;
  });
  for (const gap of data.breaks) {
    const label = fd.el("span", { class: "break-label" }, `⋯ ${gap.label}`);
    label.style.left = pct((gap.x0 + gap.x1) / 2);
    axis.append(label);
  }
  const rows = [fd.el("div", { class: "lane head" }, fd.el("div", { class: "lane-name" }, ""), axis)];
  data.lanes.forEach((node, index) => {
    const track = fd.el("div", { class: "track" }, breaks());
    for (const bar of data.bars.filter((b) => b.lane === index)) track.append(barElement(bar));
    for (const hop of data.routes.filter((r) => r.router === node)) {
      const flag = fd.el("span", { class: `route${hop.label === "on_error" ? " on-error" : ""}`,
        title: `${hop.router} → ${hop.target} (${hop.label})` }, `→ ${hop.target}`);
      if (hop.x > 0.75) {  // near the end: before the router's bar instead of past it
        const own = data.bars.filter((b) => b.lane === index && b.x0 <= hop.x + 1e-9).pop();
        flag.style.right = pct(1 - (own ? own.x0 : hop.x));
      } else flag.style.left = pct(hop.x);
      track.append(flag);
    }
    rows.push(fd.el("div", { class: "lane", dataset: { node } },
      fd.el("div", { class: "lane-name", title: node }, node), track));
  });
  box.replaceChildren(...rows);
}

function steps(data) {
  const items = [
    ...data.bars.map((bar) => ({ at: bar.start_s, bar })),
    ...data.routes.map((hop) => ({ at: hop.at_s, hop })),
  ].sort((a, b) => a.at - b.at || (a.hop ? 1 : -1));
  return items.map(({ bar, hop }) => {
    if (hop) {
      return fd.el("li", { class: "step route-step" },
        fd.el("span", { class: "muted" }, `+${fd.duration(hop.at_s)} `),
        `route ${hop.router} → ${hop.target}`,
        hop.label !== hop.target ? fd.el("span", { class: "muted" }, ` (${hop.label})`) : null);
    }
    const calls = bar.calls.map((call) => fd.el("li", { class: `call-line ${call.kind}${call.failed ? " failed" : ""}` },
      call.line, call.error ? fd.el("span", { class: "error-text" }, ` — ${call.error}`) : null));
    return fd.el("li", { class: `step ${bar.status}`, dataset: { node: bar.node } },
      fd.el("span", { class: "muted" }, `+${fd.duration(bar.start_s)} `),
      fd.el("strong", {}, bar.node), " ", fd.badge(bar.status),
      bar.attempt > 1 ? ` attempt ${bar.attempt}` : "",
      bar.duration_s !== null ? fd.el("span", { class: "muted" }, ` ${fd.duration(bar.duration_s)}`) : "",
      bar.wrote.length ? fd.el("div", { class: "wrote" }, `wrote ${bar.wrote.join(", ")}`) : null,
      bar.error ? fd.el("div", { class: "error-text" }, bar.error) : null,
      bar.question ? fd.el("div", { class: "q" }, bar.question) : null,
      calls.length ? fd.el("ul", { class: "calls" }, calls) : null);
  });
}

// A code workflow's pipeline as an items × stages matrix (graphs/flows_store.py flow_view).
function pipelines(flow) {
  return flow.pipelines.map((pipe) => fd.el("table", { class: "matrix", dataset: { pipeline: pipe.name } },
    fd.el("caption", {}, `pipeline ${pipe.name}`),
    fd.el("tr", {}, fd.el("th", {}, "item"), ...pipe.stages.map((stage) => fd.el("th", {}, stage))),
    ...pipe.items.map((item, row) => fd.el("tr", {},
      fd.el("th", {}, String(item)),
      ...pipe.cells[row].map((cell) => fd.el("td", { class: `cell ${cell.status}` }, cell.status))))));
}

function waitBox(waits) {
  const open = waits.filter((w) => w.status === "open");
  const box = document.getElementById("wait");
  box.hidden = open.length === 0;
  box.replaceChildren(...open.map((wait) => fd.el("div", {},
    fd.el("h2", {}, `Waiting for an answer at ${wait.node}`),
    fd.el("pre", { class: "q" }, wait.question),
    wait.options.length ? fd.el("p", {}, `Options: ${wait.options.join(" / ")}`) : null,
    wait.expires_at ? fd.el("p", { class: "muted" }, `expires ${fd.clock(wait.expires_at)}`) : null,
    fd.el("p", { class: "muted" }, "Answer it in the chat the run came from."))));
}

function render(data) {
  const run = data.run;
  document.title = `Frontdesk · ${run.workflow} · ${run.status}`;
  document.getElementById("summary").replaceChildren(...summary(run, data.models || []));
  const error = document.getElementById("run-error");
  error.hidden = !run.error;
  error.textContent = run.error || "";
  waitBox(data.waits);
  timeline(data.timeline);
  const graph = document.getElementById("graph");
  // graph_svg is markup built by the server with every name escaped (bot/dashboard_graph.py)
  if (data.graph_svg) graph.innerHTML = data.graph_svg;
  else if (data.flow && data.flow.pipelines.length) graph.replaceChildren(...pipelines(data.flow));
  else graph.textContent = `The ${run.workflow} workflow has no graph to draw.`;
  document.getElementById("steps").replaceChildren(...steps(data.timeline));
  document.getElementById("state").textContent = JSON.stringify(data.state, null, 2);
  document.getElementById("events-summary").textContent = `Events (${data.events.length})`;
  document.getElementById("events").textContent =
    data.events.map((event) => JSON.stringify(event)).join("\n");
  document.body.dataset.status = run.status;
  document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
  document.body.dataset.ready = "1";
  fd.stamp();
}

async function refresh() {
  let data = null;
  try {
    data = await fd.getJSON(`/api/runs/${encodeURIComponent(runId)}`);
    fd.problem(null);
    render(data);
  } catch (error) {
    fd.problem(error.message);
  }
  const status = data ? data.run.status : "running";
  if (status === "running" || status === "waiting") {
    setTimeout(refresh, status === "running" ? POLL_RUNNING_MS : POLL_WAITING_MS);
  }
}

document.getElementById("run-id").textContent = runId;
refresh();
