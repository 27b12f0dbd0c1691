// Drover's web dashboard: one page, no libraries, no network beyond the server that sent it.
// It reads /ui/api/* with the user's token (from `scontrol token`), polls every few seconds
// while visible, and draws with the DOM (text is never parsed as HTML).
"use strict";

const POLL_MS = 5000;
const STATES = ["PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "COMPLETED", "CANCELLED",
  "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY"];
let session = null;  // {token, user}
let overview = null;
let timer = null;
let renderSeq = 0;

// ---------- helpers ----------
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "style") Object.assign(el.style, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}
function svg(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity))
    if (child !== null && child !== undefined)
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}
function when(t) {
  if (!t) return "";
  const d = new Date(t * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
function duration(s) {
  if (s === undefined || s === null || s < 0 || s >= 9e15) return "UNLIMITED";
  s = Math.floor(s);
  const d = Math.floor(s / 86400), hh = Math.floor(s % 86400 / 3600),
    m = Math.floor(s % 3600 / 60), sec = s % 60;
  const pad = (n) => String(n).padStart(2, "0");
  return (d ? `${d}-${pad(hh)}:` : hh ? `${hh}:` : "") + `${hh || d ? pad(m) : m}:${pad(sec)}`;
}
function micros(us) {
  if (us >= 1e6) return (us / 1e6).toFixed(2) + " s";
  if (us >= 1e3) return (us / 1e3).toFixed(1) + " ms";
  return us + " µs";
}
function showError(message) {
  const box = document.getElementById("error");
  box.textContent = message;
  box.hidden = !message;
}
function params() {
  const hash = location.hash || "#/queue";
  const [path, query] = hash.slice(1).split("?");
  return { parts: path.split("/").filter(Boolean), query: new URLSearchParams(query || "") };
}

// ---------- the API ----------
async function api(path, options) {
  const headers = { "X-SLURM-USER-TOKEN": session.token };
  if (session.user) headers["X-SLURM-USER-NAME"] = session.user;
  const init = Object.assign({ headers, cache: "no-store" }, options || {});
  if (init.body) headers["Content-Type"] = "application/json";
  const response = await fetch("/ui/api/" + path, init);
  let document_ = null;
  try { document_ = await response.json(); } catch (e) { document_ = null; }
  if (!response.ok) {
    const message = document_ && document_.errors && document_.errors[0]
      ? document_.errors[0].error : `HTTP ${response.status}`;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return document_;
}

// ---------- sign-in ----------
function loadSession() {
  try { session = JSON.parse(sessionStorage.getItem("drover-session")); } catch (e) { session = null; }
}
function signOut() {
  sessionStorage.removeItem("drover-session");
  session = null;
  overview = null;
  route();
}
function loginPage(main, message) {
  document.getElementById("whoami").textContent = "";
  document.getElementById("signout").hidden = true;
  const token = h("textarea", { id: "login-token", placeholder: "eyJhbGciOi…",
    autocomplete: "off", spellcheck: "false" });
  const user = h("input", { id: "login-user", placeholder: "(the token's user)", autocomplete: "off" });
  const form = h("form", { class: "panel login", id: "login-form", onsubmit: (event) => {
    event.preventDefault();
    let text = token.value.trim();
    if (text.startsWith("SLURM_JWT=")) text = text.slice(10);
    if (!text) return;
    session = { token: text, user: user.value.trim() };
    sessionStorage.setItem("drover-session", JSON.stringify(session));
    overview = null;
    route();
  } },
  h("h1", {}, "Sign in"),
  h("p", { class: "muted" }, "Paste a token from ", h("code", {}, "scontrol token"),
    " (the cluster needs AuthAltTypes=auth/jwt). The token stays in this tab only."),
  message ? h("p", { class: "state FAILED", id: "login-message" }, message) : null,
  h("div", { class: "row" }, h("label", { for: "login-token" }, "Token"), token),
  h("div", { class: "row" }, h("label", { for: "login-user" },
    "User name (only for a root or SlurmUser token acting for someone)"), user),
  h("button", { class: "primary", id: "login-button", type: "submit" }, "Sign in"));
  main.replaceChildren(form);
}

// ---------- pages ----------
function stateClass(state) {
  const s = (state || "").toUpperCase();
  if (s.includes("DOWN") || s.includes("FAIL")) return "down";
  if (s.includes("DRAIN")) return "drained";
  if (s.startsWith("ALLOC")) return "allocated";
  if (s.startsWith("MIX")) return "mixed";
  if (s.startsWith("IDLE")) return "idle";
  return "other";
}
function heat(fraction) {  // idle blue-grey to saturated orange
  const f = Math.max(0, Math.min(1, fraction));
  if (f === 0) return "";
  const hue = 200 - 170 * f, light = 30 + 22 * f;
  return `hsl(${hue}, 75%, ${light}%)`;
}

async function queuePage(main, query) {
  const filters = {};
  for (const key of ["user", "account", "partition", "state"])
    if (query.get(key)) filters[key] = query.get(key);
  const search = new URLSearchParams(filters);
  search.set("limit", "500");
  const [ov, list] = await Promise.all([getOverview(), api("jobs?" + search)]);
  const input = (name, placeholder) => h("input", { id: "filter-" + name, name,
    value: filters[name] || "", placeholder, size: 10 });
  const select = (name, values) => h("select", { id: "filter-" + name, name },
    h("option", { value: "" }, "any"),
    values.map((v) => h("option", { value: v, selected: filters[name] === v }, v)));
  const form = h("form", { class: "filters", id: "queue-filters", onsubmit: (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const key of ["user", "account", "partition", "state"]) {
      const value = form.elements[key].value.trim();
      if (value) next.set(key, value);
    }
    location.hash = "#/queue" + (next.toString() ? "?" + next : "");
  } },
  h("label", {}, "User", input("user", "anyone")),
  h("label", {}, "Account", input("account", "any")),
  h("label", {}, "Partition", select("partition", ov.partitions.map((p) => p.name))),
  h("label", {}, "State", select("state", STATES)),
  h("button", { class: "primary", type: "submit", id: "filter-apply" }, "Filter"),
  h("button", { type: "button", onclick: () => { location.hash = "#/queue"; } }, "Clear"));
  const reasons = Object.entries(ov.queue.by_reason).filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const rows = list.jobs.map((job) => h("tr", { "data-job": job.id },
    h("td", {}, h("a", { href: "#/job/" + job.id, class: "job-link" }, job.id)),
    h("td", {}, job.name), h("td", {}, job.user), h("td", { class: "hide-small" }, job.account),
    h("td", {}, job.partition), h("td", { class: "state " + job.state }, job.state),
    h("td", {}, job.state === "PENDING" ? `(${job.reason})` : job.nodes),
    h("td", { class: "num" }, job.gpus || ""),
    h("td", { class: "hide-small" }, when(job.submit)),
    h("td", {}, job.start ? when(job.start)
      : job.expected_start ? h("span", { class: "muted", title: "expected, from the plan" },
        "≈ " + when(job.expected_start)) : ""),
    h("td", { class: "num hide-small" }, job.limit ? duration(job.limit) : "—")));
  main.replaceChildren(
    h("h1", {}, "Queue"),
    h("div", { class: "cards" },
      card(ov.queue.pending, "pending", "count-pending"),
      card(ov.queue.running, "running", "count-running"),
      ov.partitions.map((p) => card(`${p.running} / ${p.pending}`, `${p.name}: running / pending`))),
    h("h2", {}, "Why jobs wait"),
    h("div", { class: "chips", id: "reasons" }, reasons.length
      ? reasons.map(([reason, n]) => h("span", { class: "chip" }, `${reason}: ${n}`))
      : h("span", { class: "muted" }, "nothing is waiting")),
    h("h2", {}, "Jobs"), form,
    h("div", { class: "panel table-wrap" },
      h("table", { id: "queue-table" },
        h("thead", {}, h("tr", {}, ["Job", "Name", "User", "Account", "Partition", "State",
          "Nodes (reason)", "GPUs", "Submitted", "Start", "Limit"].map((t, i) =>
          h("th", { class: [3, 8, 10].includes(i) ? "hide-small" : (i === 7 ? "num" : null) }, t)))),
        h("tbody", {}, rows)),
      list.jobs.length === 0 ? h("p", { class: "muted", id: "queue-empty" }, "No jobs match.") : null,
      list.more_after ? h("p", { class: "muted" }, "The first 500 are shown: filter to narrow.") : null));
}

function card(value, label, id) {
  return h("div", { class: "card", id }, h("div", { class: "value" }, value),
    h("div", { class: "label" }, label));
}

async function getOverview() {
  overview = await api("overview");
  document.getElementById("cluster-name").textContent = overview.cluster;
  const who = document.getElementById("whoami");
  who.replaceChildren(overview.user || "", " ",
    overview.operator ? h("span", { class: "badge op", id: "operator-badge" }, "operator")
      : h("span", { class: "badge" }, "read-only"));
  document.getElementById("signout").hidden = false;
  return overview;
}

async function nodesPage(main, query) {
  const ov = await getOverview();
  const counts = {};
  let gpus = 0, gpusAlloc = 0;
  for (const node of ov.nodes) {
    const c = stateClass(node.state);
    counts[c] = (counts[c] || 0) + 1;
    gpus += node.gpus || 0;
    gpusAlloc += node.gpus_alloc || 0;
  }
  // The topology's groups in tree order (a switch, then the switches under it), each with the
  // nodes directly under it; the subtree's totals in its title.
  const direct = new Map();
  for (const node of ov.nodes) {
    const key = node.group || "";
    if (!direct.has(key)) direct.set(key, []);
    direct.get(key).push(node);
  }
  const children = new Map();
  for (const group of ov.groups) {
    if (!children.has(group.parent)) children.set(group.parent, []);
    children.get(group.parent).push(group.name);
  }
  const groups = [];
  const visit = (name, depth) => {
    const below = [...(direct.get(name) || [])];
    const index = groups.length;
    groups.push({ name, depth, nodes: direct.get(name) || [], subtree: below });
    for (const child of children.get(name) || []) {
      const sub = visit(child, depth + 1);
      below.push(...sub);
    }
    groups[index].subtree = below;
    return below;
  };
  for (const root of children.get("") || []) visit(root, 0);
  if (direct.has("")) groups.push({ name: "", depth: 0, nodes: direct.get(""), subtree: direct.get("") });
  const selectedName = query.get("node");
  const detail = h("div", { class: "panel", id: "node-detail" },
    h("p", { class: "muted" }, "Select a node."));
  const big = ov.nodes.length > 2000;
  const cell = (node) => {
    const c = stateClass(node.state);
    const fraction = node.gpus ? node.gpus_alloc / node.gpus
      : node.cpus ? node.cpus_alloc / node.cpus : 0;
    const el = h("div", { class: `node ${c}${node.name === selectedName ? " selected" : ""}`,
      "data-node": node.name, "data-state": node.state, "data-gpus": node.gpus || 0,
      "data-gpus-alloc": node.gpus_alloc || 0,
      title: `${node.name}: ${node.state}` + (node.gpus ? `, GPUs ${node.gpus_alloc}/${node.gpus}` : "") +
        (node.reason ? ` — ${node.reason}` : "") });
    const color = heat(fraction);
    if (color) el.style.backgroundColor = color;
    return el;
  };
  const grid = h("div", { id: "heatmap", class: big ? "big" : "" });
  grid.addEventListener("click", (event) => {
    const name = event.target.getAttribute && event.target.getAttribute("data-node");
    if (!name) return;
    for (const el of grid.querySelectorAll(".node.selected")) el.classList.remove("selected");
    event.target.classList.add("selected");
    showNode(detail, ov, ov.nodes.find((n) => n.name === name));
  });
  for (const group of groups) {
    const all = group.subtree;
    const gpuTotal = all.reduce((sum, n) => sum + (n.gpus || 0), 0);
    const gpuText = gpuTotal ? ` · GPUs ${all.reduce((sum, n) => sum + (n.gpus_alloc || 0), 0)}/${gpuTotal}` : "";
    const box = h("div", { class: "group", "data-group": group.name },
      h("div", { class: "title" }, group.name || "nodes", ` — ${all.length} nodes${gpuText}`),
      group.nodes.length ? h("div", { class: "grid" }, group.nodes.map(cell)) : null);
    box.style.marginLeft = `${group.depth * 14}px`;
    grid.append(box);
  }
  const legend = h("div", { class: "legend", id: "heatmap-counts" },
    ["idle", "mixed", "allocated", "drained", "down", "other"].filter((c) => counts[c])
      .map((c) => h("span", { "data-class": c, "data-count": counts[c] },
        h("span", { class: "sw node " + c }), `${c}: ${counts[c]}`)),
    h("span", { id: "gpu-totals", "data-gpus": gpus, "data-gpus-alloc": gpusAlloc },
      `GPUs allocated: ${gpusAlloc} of ${gpus}`),
    h("span", {}, "allocation 0% ", h("span", { class: "sw scale" }), " 100%"));
  const drained = ov.nodes.filter((n) => ["drained", "down"].includes(stateClass(n.state)));
  main.replaceChildren(h("h1", {}, "Nodes"), legend,
    h("div", { class: "split" },
      h("div", { class: "panel" }, grid),
      h("div", {}, detail,
        h("div", { class: "panel" }, h("h2", {}, "Drained and down"),
          drained.length ? h("table", { id: "drained-table" }, h("tbody", {}, drained.map((n) =>
            h("tr", {}, h("td", {}, n.name), h("td", { class: "state FAILED" }, n.state),
              h("td", {}, n.reason || ""))))) : h("p", { class: "muted" }, "None.")))));
  if (selectedName) showNode(detail, ov, ov.nodes.find((n) => n.name === selectedName));
}

function showNode(detail, ov, node) {
  if (!node) return;
  const actions = ov.operator ? h("div", { class: "actions" },
    h("button", { class: "danger", id: "node-drain", onclick: async () => {
      const reason = prompt(`Drain ${node.name}: the reason`, "maintenance");
      if (!reason) return;
      await act(`node/${encodeURIComponent(node.name)}/drain`, { reason });
    } }, "Drain"),
    h("button", { id: "node-resume", onclick: () => act(`node/${encodeURIComponent(node.name)}/resume`, {}) },
      "Resume")) : null;
  detail.replaceChildren(h("h2", {}, node.name),
    h("dl", { class: "kv" },
      h("dt", {}, "State"), h("dd", { class: "state" }, node.state),
      node.reason ? [h("dt", {}, "Reason"), h("dd", {}, node.reason)] : null,
      h("dt", {}, "GPUs"), h("dd", {}, `${node.gpus_alloc || 0} of ${node.gpus || 0} allocated`),
      h("dt", {}, "CPUs"), h("dd", {}, `${node.cpus_alloc || 0} of ${node.cpus || 0} allocated`),
      node.group ? [h("dt", {}, "Group"), h("dd", {}, node.group)] : null,
      h("dt", {}, "Jobs"), h("dd", {}, (node.jobs || []).length
        ? node.jobs.map((id) => [h("a", { href: "#/job/" + id }, String(id)), " "]) : "none")),
    actions);
}

async function act(path, body) {
  try {
    const answer = await api(path, { method: "POST", body: JSON.stringify(body) });
    showError("");
    if (answer && answer.message) document.getElementById("updated").textContent = answer.message;
  } catch (error) {
    showError(error.message);
  }
  route();
}

async function jobPage(main, id) {
  const job = await api("job/" + encodeURIComponent(id));
  const ov = overview || await getOverview();
  const now = ov.time || Date.now() / 1000;
  const live = ["PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING"].includes(job.state);
  const ended = live ? 0 : job.end;
  // A live job's end_time is when its time limit runs out: drawn as the plan, not as its end.
  const planEnd = job.start ? (live ? job.end : 0)
    : job.expected_start ? job.expected_start + Math.min(job.limit || 3600, 86400) : 0;
  const from = job.submit, to = Math.max(ended || 0, planEnd || 0, now, from + 1);
  const pos = (t) => `${((t - from) / (to - from)) * 100}%`;
  const width = (a, b) => `${Math.max(0.5, ((b - a) / (to - from)) * 100)}%`;
  const bar = (cls, a, b, title) => { const el = h("div", { class: "bar " + cls, title });
    el.style.left = pos(a); el.style.width = width(a, b); return el; };
  let row = 0;
  const mark = (t, text) => { const m = h("div", { class: "mark" }, text); m.style.left = pos(t);
    m.style.top = (row++ % 2 ? 34 : 0) + "px";
    const k = h("div", { class: "tick" }); k.style.left = pos(t); return [k, m]; };
  const waitedUntil = job.start || (live ? now : ended || now);
  const timeline = h("div", { class: "timeline", id: "job-timeline" },
    bar("wait", from, waitedUntil, "waiting"),
    job.start ? bar("run", job.start, ended || now, "running") : null,
    job.start && live && planEnd > now ? bar("plan", now, planEnd, "until the time limit") : null,
    !job.start && job.expected_start ? bar("plan", job.expected_start, planEnd, "expected, from the plan") : null,
    mark(from, "submitted"),
    job.start ? mark(job.start, "started") : job.expected_start ? mark(job.expected_start, "expected start") : null,
    ended ? mark(ended, "ended") : mark(now, "now"),
    planEnd && live ? mark(planEnd, "time limit") : null);
  const gpuRows = [];
  for (const node of job.allocation)
    for (const gpu of node.gpus) gpuRows.push(h("tr", {}, h("td", {}, node.node),
      h("td", { class: "num" }, gpu.index), h("td", {}, gpu.uuid || "(emulated: none)")));
  const actions = ov.operator ? h("div", { class: "actions" },
    h("button", { class: "danger", id: "job-cancel", onclick: () => {
      if (confirm(`Cancel job ${job.id}?`)) act(`job/${job.id}/cancel`, {}); } }, "Cancel"),
    h("button", { id: "job-hold", onclick: () => act(`job/${job.id}/hold`, {}) }, "Hold"),
    h("button", { id: "job-release", onclick: () => act(`job/${job.id}/release`, {}) }, "Release")) : null;
  main.replaceChildren(
    h("h1", { id: "job-title" }, `Job ${job.id} `, h("span", { class: "muted" }, job.name)),
    actions,
    h("div", { class: "panel" },
      h("dl", { class: "kv", id: "job-fields" },
        h("dt", {}, "State"), h("dd", { class: "state " + job.state, id: "job-state" },
          job.state + (job.state === "PENDING" ? ` (${job.reason})` : "")),
        h("dt", {}, "User / account"), h("dd", {}, `${job.user} / ${job.account}`),
        h("dt", {}, "Partition"), h("dd", {}, job.partition),
        h("dt", {}, "Nodes"), h("dd", { id: "job-nodes" }, job.nodes || job.expected_nodes || "(none yet)"),
        h("dt", {}, "GPUs"), h("dd", {}, job.gpus || 0),
        h("dt", {}, "Time limit"), h("dd", {}, duration(job.limit)),
        h("dt", {}, "Output"), h("dd", { id: "job-stdout" }, job.stdout || ""),
        job.stderr && job.stderr !== job.stdout ? [h("dt", {}, "Errors"), h("dd", {}, job.stderr)] : null,
        h("dt", {}, "Work dir"), h("dd", {}, job.work_dir || ""))),
    h("h2", {}, "Timeline"), h("div", { class: "panel" }, timeline,
      h("p", { class: "muted" }, `submitted ${when(job.submit)}`,
        job.start ? `, started ${when(job.start)}` : job.expected_start ? `, expected to start ${when(job.expected_start)}` : "",
        ended ? `, ended ${when(ended)}` : planEnd && job.start ? `, time limit at ${when(planEnd)}` : "",
        job.earlier_runs.length ? `; ${job.earlier_runs.length} earlier run(s)` : "")),
    h("h2", {}, "GPUs"), h("div", { class: "panel table-wrap" }, gpuRows.length
      ? h("table", { id: "job-gpus" }, h("thead", {}, h("tr", {}, h("th", {}, "Node"),
        h("th", { class: "num" }, "Index"), h("th", {}, "UUID"))), h("tbody", {}, gpuRows))
      : h("p", { class: "muted" }, "No GPUs held.")),
    h("h2", {}, "Steps"), h("div", { class: "panel table-wrap" }, job.steps.length
      ? h("table", { id: "job-steps" }, h("thead", {}, h("tr", {}, ["Step", "Name", "State", "Nodes",
        "Tasks", "Start", "End", "Exit"].map((t) => h("th", {}, t)))),
      h("tbody", {}, job.steps.map((s) => h("tr", {}, h("td", {}, `${job.id}.${s.id}`), h("td", {}, s.name),
        h("td", { class: "state " + s.state }, s.state), h("td", {}, s.nodes), h("td", { class: "num" }, s.tasks),
        h("td", {}, when(s.start)), h("td", {}, when(s.end)), h("td", {}, s.end ? s.exit_code : "")))))
      : h("p", { class: "muted" }, "No steps.")),
    h("h2", {}, "scontrol show job"), h("pre", { id: "job-details" }, job.details));
}

async function fairsharePage(main) {
  const list = await api("shares");
  const byParent = new Map();
  for (const share of list.shares) {
    const key = share.user ? share.account : share.parent;
    if (!byParent.has(key)) byParent.set(key, []);
    byParent.get(key).push(share);
  }
  const rows = [];
  const walk = (parent, depth, seen) => {
    for (const share of byParent.get(parent) || []) {
      const name = share.user || share.account;
      rows.push(h("tr", { "data-account": share.account, "data-user": share.user || "" },
        h("td", { class: share.user ? "user" : "" }, "\u2003".repeat(depth) + (share.user ? "└ " : "") + name),
        h("td", { class: "num" }, share.raw_shares),
        h("td", { class: "num" }, share.norm_shares.toFixed(3)),
        h("td", { class: "num" }, Math.round(share.raw_usage)),
        h("td", { class: "num" }, share.effective_usage.toFixed(3)),
        h("td", {}, share.user ? fsBar(share.fairshare) : "")));
      if (!share.user && !seen.has(share.account)) {
        seen.add(share.account);
        walk(share.account, depth + 1, seen);
      }
    }
  };
  const roots = list.shares.filter((s) => !s.user && !s.parent);
  const seen = new Set();
  for (const root of roots) {
    rows.push(h("tr", { "data-account": root.account }, h("td", {}, root.account),
      h("td", { class: "num" }, root.raw_shares), h("td", { class: "num" }, root.norm_shares.toFixed(3)),
      h("td", { class: "num" }, Math.round(root.raw_usage)), h("td", { class: "num" }, root.effective_usage.toFixed(3)),
      h("td", {}, "")));
    seen.add(root.account);
    walk(root.account, 1, seen);
  }
  main.replaceChildren(h("h1", {}, "Fair share"),
    h("p", { class: "muted" }, "The account tree with each association's shares and decayed usage; " +
      "the bar is the user's fair-share factor (1: under their share, 0: far over it)."),
    h("div", { class: "panel table-wrap" }, rows.length ? h("table", { id: "shares-table" },
      h("thead", {}, h("tr", {}, ["Account / user", "Shares", "Norm shares", "Usage", "Effective usage",
        "Fair share"].map((t) => h("th", {}, t)))), h("tbody", {}, rows))
      : h("p", { class: "muted" }, "No associations (accounting is off).")));
}
function fsBar(value) {
  const inner = h("div");
  inner.style.width = `${Math.round(Math.max(0, Math.min(1, value)) * 100)}%`;
  return h("div", { title: value.toFixed(3), style: {} }, h("div", { class: "bar-cell" }, inner),
    h("span", { class: "muted" }, value.toFixed(3)));
}

async function reservationsPage(main) {
  const list = await api("reservations");
  const now = list.time;
  let from = now - 3600, to = now + 86400;
  for (const r of list.reservations) {
    from = Math.min(from, r.start);
    to = Math.max(to, Math.min(r.end, now + 30 * 86400));
  }
  const span = to - from;
  const x = (t) => 160 + ((Math.min(Math.max(t, from), to) - from) / span) * 800;
  const height = 30 + list.reservations.length * 26;
  const chart = svg("svg", { class: "chart", id: "reservations-timeline", viewBox: `0 0 980 ${height}`,
    preserveAspectRatio: "none" },
  svg("line", { x1: x(now), x2: x(now), y1: 0, y2: height, stroke: "#f85149" }),
  svg("text", { x: x(now) + 3, y: 12 }, "now"),
  list.reservations.map((r, i) => [
    svg("text", { x: 4, y: 34 + i * 26 }, r.name),
    svg("rect", { x: x(r.start), y: 22 + i * 26, width: Math.max(2, x(r.end) - x(r.start)),
      height: 16, rx: 3, fill: r.flags.includes("MAINT") ? "#d29922" : "#4fb3ff" })]),
  svg("text", { x: 160, y: height - 2 }, when(from)),
  svg("text", { x: 860, y: height - 2 }, when(to)));
  main.replaceChildren(h("h1", {}, "Reservations"),
    list.reservations.length ? h("div", { class: "panel" }, chart) : null,
    h("div", { class: "panel table-wrap" }, list.reservations.length
      ? h("table", { id: "reservations-table" }, h("thead", {}, h("tr", {}, ["Name", "Start", "End",
        "Nodes", "Users", "Accounts", "Flags"].map((t) => h("th", {}, t)))),
      h("tbody", {}, list.reservations.map((r) => h("tr", { "data-reservation": r.name },
        h("td", {}, r.name), h("td", {}, when(r.start)), h("td", {}, when(r.end)), h("td", {}, r.nodes),
        h("td", {}, r.users.join(",")), h("td", {}, r.accounts.join(",")), h("td", {}, r.flags.join(","))))))
      : h("p", { class: "muted", id: "reservations-empty" }, "No reservations.")));
}

function lineChart(id, series, labels, yFormat) {
  const W = 900, H = 180, L = 56, B = 20;
  const points = series[0].values;
  const chart = svg("svg", { class: "chart", id, viewBox: `0 0 ${W} ${H}` });
  if (points.length < 1) {
    chart.append(svg("text", { x: 20, y: 90 }, "collecting samples (one every 15 s)…"));
    return chart;
  }
  const t0 = points[0][0], t1 = Math.max(points[points.length - 1][0], t0 + 1);
  let max = 1;
  for (const s of series) for (const [, v] of s.values) max = Math.max(max, v);
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - 10);
  const y = (v) => H - B - (v / max) * (H - B - 10);
  chart.append(svg("text", { x: 4, y: 14 }, yFormat(max)), svg("text", { x: 4, y: H - B }, yFormat(0)),
    svg("text", { x: L, y: H - 4 }, when(t0)), svg("text", { x: W - 130, y: H - 4 }, when(t1)));
  for (const s of series) {
    const d = s.values.map(([t, v], i) => `${i ? "L" : "M"}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join("");
    chart.append(svg("path", { d, fill: "none", stroke: s.color, "stroke-width": 2 }));
    if (s.values.length === 1)
      chart.append(svg("circle", { cx: x(s.values[0][0]), cy: y(s.values[0][1]), r: 3, fill: s.color }));
  }
  labels.forEach((text, i) => chart.append(svg("text", { x: L + 10 + i * 110, y: 14, fill: series[i].color }, text)));
  return chart;
}

async function schedulerPage(main) {
  const ov = await getOverview();
  const s = ov.scheduler;
  const history = s.history || [];
  main.replaceChildren(h("h1", {}, "Scheduler"),
    h("div", { class: "cards", id: "scheduler-cards" },
      card(micros(s.cycle_last_micros), "last cycle"), card(micros(s.cycle_max_micros), "longest cycle"),
      card(micros(s.cycle_mean_micros), "mean cycle"), card(s.cycles, "cycles"),
      card(s.queue_length, "jobs in the last cycle"), card(s.backfill_depth_mean, "mean depth (jobs considered)"),
      card(s.backfilled, "started by backfill"), card(s.submitted, "submitted"), card(s.started, "started"),
      card(s.completed, "completed"), card(s.agent_queue, "agent calls queued"),
      card(s.cycle_last_time ? when(s.cycle_last_time).slice(11) : "never", "last cycle at")),
    h("h2", {}, "Queue over time"), h("div", { class: "panel" },
      lineChart("queue-chart", [
        { color: "#d29922", values: history.map((p) => [p[0], p[1]]) },
        { color: "#3fb950", values: history.map((p) => [p[0], p[2]]) }],
      ["pending", "running"], (v) => String(Math.round(v)))),
    h("h2", {}, "Longest cycle per sample"), h("div", { class: "panel" },
      lineChart("cycle-chart", [{ color: "#4fb3ff", values: history.map((p) => [p[0], p[3]]) }],
        ["cycle"], micros)));
}

// ---------- routing ----------
async function route() {
  const main = document.getElementById("main");
  clearTimeout(timer);
  if (!session) loadSession();
  if (!session) return loginPage(main);
  const { parts, query } = params();
  const page = parts[0] || "queue";
  for (const a of document.querySelectorAll("nav a"))
    a.classList.toggle("active", a.id === "nav-" + page || (page === "job" && a.id === "nav-queue"));
  const seq = ++renderSeq;
  const scroll = window.scrollY;
  // Render into a fresh element, then swap: a poll never leaves a half-drawn page.
  const target = document.createElement("div");
  try {
    if (page === "queue") await queuePage(target, query);
    else if (page === "nodes") await nodesPage(target, query);
    else if (page === "job") await jobPage(target, decodeURIComponent(parts[1] || ""));
    else if (page === "fairshare") await fairsharePage(target);
    else if (page === "reservations") await reservationsPage(target);
    else if (page === "scheduler") await schedulerPage(target);
    else target.append(h("p", {}, "No such page."));
    if (seq !== renderSeq) return;
    // A poll keeps what the user is typing or has selected.
    const active = document.activeElement;
    if (active && active.closest && active.closest("form") && main.contains(active) &&
        timer !== null && seq > 1 && main.dataset.page === location.hash) {
      // skip this redraw while a form field has focus
    } else {
      main.replaceChildren(...target.childNodes);
      main.dataset.page = location.hash;
      window.scrollTo(0, scroll);
    }
    showError("");
    document.getElementById("updated").textContent = "updated " + when(Date.now() / 1000).slice(11);
    document.body.dataset.ready = page;
    // The first page drawn with data, in ms since navigation began (the browser test reads it).
    if (window.droverFirstReady === undefined) window.droverFirstReady = performance.now();
  } catch (error) {
    if (seq !== renderSeq) return;
    if (error.status === 401) {
      sessionStorage.removeItem("drover-session");
      session = null;
      return loginPage(main, "Sign-in failed: " + error.message);
    }
    showError(error.message);
  }
  timer = setTimeout(() => { if (!document.hidden) route(); else timer = setTimeout(route, POLL_MS); }, POLL_MS);
}

window.addEventListener("hashchange", () => { document.getElementById("main").dataset.page = ""; route(); });
window.addEventListener("DOMContentLoaded", () => {
  document.getElementById("signout").addEventListener("click", signOut);
  route();
});
