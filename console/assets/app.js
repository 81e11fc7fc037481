// skillgate console: a client of the gateway's public JSON API.
//
// No framework, no build step, no external request. Every string that
// comes from the API (skill names, reasons, SKILL.md text, node facts) is
// hostile input: it is inserted with textContent (the h() helper below),
// never parsed as HTML.
"use strict";
(() => {
  // The gateway's root, wherever the console is mounted (/ui/ → /).
  const API = new URL("../", location.href);
  const PAGE = 50; // rows of any list on screen at once
  const NODE_PAGE = 200; // nodes per GET /v1/nodes request of the nodes page
  const MATRIX_NODE_PAGE = 1000; // nodes per request when the skill page reads every node
  const REFRESH_MS = 2000; // how often the current page's data is read again
  const NODES_EVERY_MS = 10000; // the skill page's node facts, when its skill did not change
  const WAIT = "25s"; // long poll of /prompt

  // ---------------------------------------------------------------------
  // DOM helpers: text only.

  // h builds an element. props: class, text, on<event>, attributes;
  // children: nodes or strings (appended as text nodes).
  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === null || v === undefined || v === false) continue;
        if (k === "class") el.className = v;
        else if (k === "text") el.textContent = String(v);
        else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
        else el.setAttribute(k, v === true ? "" : String(v));
      }
    }
    append(el, kids);
    return el;
  }
  function append(el, kids) {
    for (const k of kids.flat(Infinity)) {
      if (k === null || k === undefined || k === false) continue;
      el.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
  }
  const $ = (sel, root = document) => root.querySelector(sel);
  const enc = encodeURIComponent;
  const fmt = (n) => Number(n).toLocaleString("en");
  const hasWords = (s) => /[\p{L}\p{N}]/u.test(s);

  function badge(text, cls) {
    return h("span", { class: "badge " + cls }, text);
  }
  function list(items) {
    if (!items || items.length === 0) return "—";
    return h("ul", null, items.map((x) => h("li", null, x)));
  }
  function kv(pairs) {
    return h("dl", { class: "kv" }, pairs.filter(Boolean).map(([k, v]) => [h("dt", null, k), h("dd", null, v)]));
  }
  function table(caption, heads, rows, extra) {
    // The wrapper scrolls sideways on a narrow window: focusable, so that
    // the keyboard scrolls it too.
    return h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption || "table", ...(extra || {}) },
      h("table", null,
        caption ? h("caption", null, caption) : null,
        h("thead", null, h("tr", null, heads.map((x) => h("th", { scope: "col", class: x.num ? "num" : null }, x.text ?? x)))),
        h("tbody", null, rows)));
  }
  function time(s) {
    if (!s) return "—";
    const d = new Date(s);
    if (isNaN(d)) return s;
    return h("time", { datetime: s, title: s }, d.toLocaleString());
  }
  function safeHomepage(u) {
    try {
      const url = new URL(u);
      if (url.protocol === "https:" || url.protocol === "http:") {
        return h("a", { href: url.href, rel: "noreferrer noopener", target: "_blank" }, u);
      }
    } catch (_) { /* not a URL: shown as text */ }
    return u;
  }

  // pager renders "rows a–b of n" with Previous/Next buttons over an
  // in-memory list; onPage(newIndex) is called on a click.
  function pager(label, page, total, onPage) {
    const pages = Math.max(1, Math.ceil(total / PAGE));
    const from = total === 0 ? 0 : page * PAGE + 1;
    const to = Math.min(total, (page + 1) * PAGE);
    return h("div", { class: "pager", role: "group", "aria-label": label + " pages" },
      h("button", { type: "button", class: "prev", disabled: page <= 0, onclick: () => onPage(page - 1) }, "Previous"),
      h("span", { class: "range" }, total === 0 ? "none" : `${fmt(from)}–${fmt(to)} of ${fmt(total)}`),
      h("button", { type: "button", class: "next", disabled: page >= pages - 1, onclick: () => onPage(page + 1) }, "Next"));
  }

  // replace swaps container's content, keeping the focus on the element
  // with the same data-key (a link or button of a re-rendered row).
  function replace(container, ...kids) {
    const a = document.activeElement;
    let key = null, tag = null, cls = null;
    if (a && container.contains(a)) {
      const k = a.closest("[data-key]");
      key = k && k.getAttribute("data-key");
      tag = a.tagName;
      cls = a.className;
    }
    container.replaceChildren();
    append(container, kids);
    if (tag) {
      let target = null;
      for (const el of container.querySelectorAll("[data-key]")) {
        if (el.getAttribute("data-key") === key) { target = el; break; }
      }
      const scope = target || container;
      const same = [...scope.querySelectorAll(tag.toLowerCase())].find((x) => x.className === cls);
      if (same) same.focus();
    }
  }

  // ---------------------------------------------------------------------
  // Session: the token stays in this tab (sessionStorage).

  const S = {
    token: sessionStorage.getItem("sg.token") || "",
    agent: sessionStorage.getItem("sg.agent") || "main",
    role: sessionStorage.getItem("sg.role") || "", // "admin" | "agent" | "open" | "" (signed out)
  };
  function saveSession() {
    sessionStorage.setItem("sg.token", S.token);
    sessionStorage.setItem("sg.agent", S.agent);
    sessionStorage.setItem("sg.role", S.role);
  }
  const canReadAll = () => S.role === "admin" || S.role === "open";

  // ---------------------------------------------------------------------
  // API

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }
  const TOKEN_INVALID = "This token is not valid for this gateway.";

  async function api(path, { signal, headers, token } = {}) {
    const hd = new Headers(headers || {});
    const tok = token === undefined ? S.token : token;
    if (tok) hd.set("Authorization", "Bearer " + tok);
    return fetch(new URL(path, API), { headers: hd, signal, cache: "no-store", credentials: "omit", redirect: "error" });
  }
  async function errorOf(res) {
    let msg = `${res.status} ${res.statusText}`;
    try {
      const j = JSON.parse(await res.text());
      if (j && typeof j.error === "string") msg = j.error;
    } catch (_) { /* not JSON */ }
    return new ApiError(res.status, msg);
  }
  // getRaw reads an answer's text (JSON, compared as text before it is
  // decoded: an unchanged answer costs no decoding); a 401 signs out (the
  // token went stale).
  async function getRaw(path, signal, okStatuses = [200]) {
    const res = await api(path, { signal });
    if (okStatuses.includes(res.status)) return res.text();
    const err = await errorOf(res);
    if (res.status === 401) {
      signOut(S.token ? TOKEN_INVALID : "This gateway needs a token: paste an admin or agent token.");
    }
    throw err;
  }
  async function getJSON(path, signal, okStatuses = [200]) {
    return JSON.parse(await getRaw(path, signal, okStatuses));
  }
  async function getText(path, signal) {
    const res = await api(path, { signal });
    if (res.ok) return res.text();
    throw await errorOf(res);
  }
  const skillsPath = (agent, query) => `v1/agents/${enc(agent)}/skills` + (query ? "?" + query : "");

  // The last /skills answer read, for the names of skills (the skill page
  // searches by name).
  let lastReport = null;

  // ---------------------------------------------------------------------
  // Sign in

  function validAgentID(id) {
    return id !== "" && !/[\/\\\u0000-\u001f\u007f-\u009f]/.test(id) && id !== "." && id !== "..";
  }

  // signIn finds out what the token may read: /v1/nodes answers the admin
  // token (or anyone when the gateway has no tokens); an agent token gets
  // 403 there and opens only its agent's endpoints.
  async function signIn(token, agent) {
    if (!validAgentID(agent)) return "The agent id must not be empty and must not hold /, \\ or control characters.";
    let res;
    try {
      res = await api("v1/nodes?limit=1&fields=id", { token });
    } catch (e) {
      return "Cannot reach the gateway: " + e.message;
    }
    if (res.status === 200) {
      Object.assign(S, { token, agent, role: token ? "admin" : "open" });
      saveSession();
      return "";
    }
    const err = await errorOf(res);
    if (res.status === 401) return token ? TOKEN_INVALID : "This gateway needs a token: paste an admin token or an agent token.";
    if (res.status !== 403 || err.message !== "forbidden") return `The gateway answered: ${err.message}`;
    // Not the admin token: is it this agent's token?
    let r2;
    try {
      r2 = await api(`v1/agents/${enc(agent)}/prompt`, { token });
    } catch (e) {
      return "Cannot reach the gateway: " + e.message;
    }
    // 503: the token opened the agent (auth comes first), but the gateway
    // has not loaded its store yet; the overview says why.
    if (r2.status === 200 || r2.status === 503) {
      Object.assign(S, { token, agent, role: "agent" });
      saveSession();
      return "";
    }
    const e2 = await errorOf(r2);
    if (r2.status === 403 || r2.status === 401) {
      return TOKEN_INVALID + ` It is neither the admin token nor the agent token of "${agent}" (an agent token opens only its own agent: check the agent id).`;
    }
    return `The gateway answered: ${e2.message}`;
  }

  function signOut(message) {
    sessionStorage.removeItem("sg.token");
    sessionStorage.removeItem("sg.role");
    S.token = "";
    S.role = "";
    lastReport = null;
    pendingMessage = message || "";
    if (location.hash !== "#/signin") location.hash = "#/signin";
    else route();
  }
  let pendingMessage = "";

  function signinView() {
    const msg = h("div", { id: "signin-msg", role: "alert" });
    if (pendingMessage) {
      msg.append(h("p", { class: "error" }, pendingMessage));
      pendingMessage = "";
    }
    const token = h("input", { id: "token", name: "token", type: "password", autocomplete: "off", spellcheck: "false" });
    const agent = h("input", { id: "agent", name: "agent", type: "text", autocomplete: "off", spellcheck: "false", value: S.agent || "main" });
    const submit = h("button", { type: "submit", class: "primary" }, "Sign in");
    const form = h("form", { class: "signin", id: "signin", novalidate: true },
      h("label", { for: "token" }, "Token",
        h("span", { class: "hint" }, "The admin token (SKILLGATE_AGENT_TOKEN) or an agent token (gateway.agentTokens). Leave it empty when the gateway has no tokens. It is kept in this tab only."),
        token),
      h("label", { for: "agent" }, "Agent id",
        h("span", { class: "hint" }, "The agent to open; for an agent token, the agent it is for."),
        agent),
      h("div", null, submit),
      msg);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      submit.disabled = true;
      msg.replaceChildren(h("p", { class: "muted" }, "Checking the token…"));
      const problem = await signIn(token.value.trim(), agent.value.trim());
      submit.disabled = false;
      if (problem) {
        msg.replaceChildren(h("p", { class: "error" }, problem));
        token.focus();
        return;
      }
      const want = afterSignIn && afterSignIn !== "#/signin" ? afterSignIn : home();
      afterSignIn = "";
      if (location.hash === want) route(); // no hashchange: the page asked for is already in the address
      else location.hash = want;
    });
    return {
      title: "Sign in",
      el: h("section", null, h("h1", null, "Sign in"), form),
      focus: token,
    };
  }
  let afterSignIn = "";
  const home = () => (S.role === "agent" ? `#/agent/${enc(S.agent)}` : "#/overview");

  // ---------------------------------------------------------------------
  // Overview

  function overviewView() {
    const agentIn = h("input", { id: "ov-agent", type: "text", value: S.agent, autocomplete: "off", spellcheck: "false" });
    const pick = h("form", { class: "controls", id: "ov-pick" },
      h("label", { for: "ov-agent" }, "Agent id", agentIn),
      h("button", { type: "submit" }, "Show"));
    pick.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const id = agentIn.value.trim();
      if (!validAgentID(id)) {
        msg.replaceChildren(h("p", { class: "error" }, "Not a valid agent id."));
        return;
      }
      msg.replaceChildren();
      S.agent = id;
      saveSession();
      updateChrome();
      kick();
    });
    const msg = h("div", { role: "alert" });
    const cards = h("div", { class: "cards", id: "ov-cards" }, h("p", { class: "muted" }, "Loading…"));
    const warnings = h("section", { id: "ov-warnings" });
    const queue = h("section", { id: "ov-governance" });
    let diagPage = 0, queuePage = 0;
    let last = { ready: "", skills: "", gov: "" };
    let data = {};

    function render() {
      const { ready, report, gov } = data;
      const c = [];
      if (ready) {
        c.push(h("section", { class: "card", id: "card-gateway" }, h("h2", null, "Gateway"), kv([
          ["Ready", ready.ready ? badge("ready", "yes") : badge("not ready", "no")],
          ["Nodes connected", h("span", { class: "big", id: "ov-nodes" }, fmt(ready.nodes))],
          ["Storage", ready.store],
          ["Snapshot age", `${Number(ready.snapshotAgeSeconds).toFixed(1)} s`],
          ready.cluster ? ["Cluster", ready.cluster === "ok" ? badge("ok", "yes") : badge(ready.cluster, "no")] : null,
          ready.remoteNodes !== undefined ? ["Nodes on other replicas", h("span", { id: "ov-remote" }, fmt(ready.remoteNodes))] : null,
          ready.error ? ["Problem", ready.error] : null,
          ready.hint ? ["Check", ready.hint] : null,
        ])));
      }
      if (report) {
        const sk = report.skills || [];
        const offered = sk.filter((s) => s.eligible).length;
        const stages = {};
        const modes = {};
        const tiers = {};
        for (const s of sk) {
          if (!s.eligible) stages[s.stage] = (stages[s.stage] || 0) + 1;
          const m = s.governance ? s.governance.mode : "not scanned";
          modes[m] = (modes[m] || 0) + 1;
          if (s.eligible) tiers[s.prompt || "full"] = (tiers[s.prompt || "full"] || 0) + 1;
        }
        c.push(h("section", { class: "card", id: "card-skills" }, h("h2", null, `Skills of agent ${report.agent}`), kv([
          ["Skills", fmt(sk.length)],
          ["Offered", h("span", { id: "ov-offered" }, fmt(offered))],
          ["Not offered", fmt(sk.length - offered)],
          ...Object.keys(stages).sort().map((k) => ["  at stage " + (k || "?"), fmt(stages[k])]),
        ]), h("p", null, h("a", { href: `#/agent/${enc(report.agent)}` }, "Open the agent's skills"))));
        c.push(h("section", { class: "card", id: "card-modes" }, h("h2", null, "Governance modes"),
          kv(["allow", "quarantine", "block", "not scanned"].filter((m) => modes[m]).map((m) => [m, fmt(modes[m])])),
          h("p", { class: "muted" }, "Prompt tiers: " + (Object.keys(tiers).map((t) => `${t} ${tiers[t]}`).join(", ") || "none"))));
      }
      if (c.length) replace(cards, c);

      // Warnings: the view's diagnostics.
      const diags = (report && report.diagnostics) || [];
      diagPage = Math.min(diagPage, Math.max(0, Math.ceil(diags.length / PAGE) - 1));
      replace(warnings, h("h2", null, "Warnings"),
        diags.length === 0 ? h("p", { class: "muted" }, "No diagnostics.") : [
          table(`Diagnostics of agent ${report.agent}'s view (storage, SKILL.md parsing, config)`,
            ["Level", "Location", "Message"],
            diags.slice(diagPage * PAGE, (diagPage + 1) * PAGE).map((d) => h("tr", null,
              h("td", null, badge(d.level, d.level === "error" ? "no" : "warn")), h("td", null, h("code", null, d.location)), h("td", null, d.message)))),
          pager("Diagnostics", diagPage, diags.length, (p) => { diagPage = p; render(); }),
        ]);

      if (!canReadAll()) {
        replace(queue, h("h2", null, "Governance queue"),
          h("p", { class: "notice" }, `The governance queue needs the admin token; this is an agent token for ${S.agent}.`));
        return;
      }
      const qs = (gov && gov.skills) || [];
      queuePage = Math.min(queuePage, Math.max(0, Math.ceil(qs.length / PAGE) - 1));
      replace(queue, h("h2", null, "Governance queue"),
        gov ? h("p", { class: "muted" }, `Gateway governance mode: ${gov.mode}. Skills whose effective mode is not allow, in location order.`) : null,
        qs.length === 0 ? h("p", { class: "muted" }, "Nothing waits for review.") : [
          table("Skills held or flagged by governance", ["Skill", "Scope", "Mode", "Risk", "Enforced", "Reason"],
            qs.slice(queuePage * PAGE, (queuePage + 1) * PAGE).map((q) => {
              const g = q.governance || {};
              const agent = q.agent || S.agent;
              return h("tr", { "data-key": q.location },
                h("td", null, h("a", { href: `#/agent/${enc(agent)}/skill/${enc(q.dir)}` }, q.name), h("div", { class: "muted" }, h("code", null, q.location))),
                h("td", null, q.scope + (q.agent ? ` (${q.agent})` : "")),
                h("td", null, badge(g.mode || "?", g.mode === "block" ? "no" : "warn")),
                h("td", null, `${g.band || "?"} ${g.score ?? ""}`),
                h("td", null, q.enforced ? "yes" : "no (observe)"),
                h("td", null, q.reason || "—"));
            })),
          pager("Governance queue", queuePage, qs.length, (p) => { queuePage = p; render(); }),
        ]);
    }

    return {
      title: "Overview",
      el: h("section", null, h("h1", null, "Overview"),
        canReadAll() ? pick : h("p", null, `Agent token for agent ${S.agent}.`), msg, cards, warnings, queue),
      async refresh(signal) {
        const agent = S.agent;
        const forbidden = JSON.stringify({ agent, skills: [], diagnostics: [], forbidden: true });
        const [ready, skills, gov] = await Promise.all([
          getRaw("readyz", signal, [200, 503]),
          getRaw(skillsPath(agent), signal).catch((e) => {
            if (e instanceof ApiError && e.status === 403) return forbidden;
            // 503: the store was never loaded; /readyz says why.
            if (e instanceof ApiError && e.status === 503) return JSON.stringify({ agent, skills: [], diagnostics: [], unavailable: e.message });
            throw e;
          }),
          canReadAll() ? getRaw("v1/governance", signal).catch((e) => {
            if (e instanceof ApiError && e.status === 503) return "null";
            throw e;
          }) : Promise.resolve("null"),
        ]);
        if (ready === last.ready && skills === last.skills && gov === last.gov) return;
        last = { ready, skills, gov };
        data = { ready: JSON.parse(ready), report: JSON.parse(skills), gov: JSON.parse(gov) };
        if (data.report.forbidden) msg.replaceChildren(h("p", { class: "error" }, `This token cannot read agent ${agent}.`));
        else if (data.report.unavailable) {
          msg.replaceChildren(h("p", { class: "error", id: "ov-unavailable" }, data.report.unavailable));
          data.report = null;
        } else {
          // The store's problem is over; other messages stay.
          if (msg.querySelector("#ov-unavailable")) msg.replaceChildren();
          lastReport = data.report;
        }
        render();
      },
    };
  }

  // ---------------------------------------------------------------------
  // Agent

  function hostsText(s) {
    if (s.always) return "always";
    if (!s.filtered || s.filtered.length === 0) return s.eligible ? "any" : "—";
    return fmt((s.hosts || []).length);
  }
  function govText(g) {
    if (!g) return "not scanned";
    return `${g.mode} · ${g.band} ${g.score}`;
  }

  function agentView(agent) {
    let report = null, reportKey = "";
    let hits = null; // search: location → score, for the current words
    let page = 0;
    const f = { text: "", verdict: "all", stage: "" };

    const textIn = h("input", { id: "ag-filter", type: "search", autocomplete: "off", spellcheck: "false", placeholder: "name or words of the description" });
    const verdictIn = h("select", { id: "ag-verdict" },
      h("option", { value: "all" }, "all"), h("option", { value: "offered" }, "offered"), h("option", { value: "not" }, "not offered"));
    const stageIn = h("select", { id: "ag-stage" },
      h("option", { value: "" }, "any"), ["config", "governance", "requirements", "runtime"].map((s) => h("option", { value: s }, s)));
    const countEl = h("p", { id: "ag-count", class: "muted", "aria-live": "polite" });
    const listEl = h("div", { id: "ag-list" }, h("p", { class: "muted" }, "Loading…"));
    const msg = h("div", { role: "alert" });
    const promptMeta = h("p", { class: "muted", id: "ag-prompt-meta" });
    const promptPre = h("pre", { id: "ag-prompt", tabindex: "0", "aria-label": "Prompt block" });
    const summary = h("p", { id: "ag-summary" });

    let searchTimer = 0, searchSeq = 0;
    async function runSearch() {
      const words = f.text.trim();
      const seq = ++searchSeq;
      if (!hasWords(words)) { hits = null; render(); return; }
      try {
        const r = await getJSON(skillsPath(agent, "q=" + enc(words) + "&limit=10000"), undefined);
        if (seq !== searchSeq) return;
        hits = new Map((r.skills || []).map((s) => [s.location, s.score]));
      } catch (e) {
        if (seq !== searchSeq) return;
        hits = null;
        msg.replaceChildren(h("p", { class: "error" }, "Search failed: " + e.message));
      }
      render();
    }
    textIn.addEventListener("input", () => {
      f.text = textIn.value;
      page = 0;
      render(); // the name filter at once; the server's words search after a pause
      clearTimeout(searchTimer);
      searchTimer = setTimeout(runSearch, 250);
    });
    verdictIn.addEventListener("change", () => { f.verdict = verdictIn.value; page = 0; render(); });
    stageIn.addEventListener("change", () => { f.stage = stageIn.value; page = 0; render(); });

    function visible() {
      const sk = report ? report.skills || [] : [];
      const t = f.text.trim().toLowerCase();
      let out = sk.filter((s) => {
        if (f.verdict === "offered" && !s.eligible) return false;
        if (f.verdict === "not" && s.eligible) return false;
        if (f.stage && s.stage !== f.stage) return false;
        if (!t) return true;
        return s.name.toLowerCase().includes(t) || s.dir.toLowerCase().includes(t) || (hits !== null && hits.has(s.location));
      });
      if (t && hits) {
        // Search hits first, best first; then the name matches, in listing order.
        const rank = (s) => (hits.has(s.location) ? hits.get(s.location) : -1);
        out = out.map((s, i) => [s, i]).sort((a, b) => rank(b[0]) - rank(a[0]) || a[1] - b[1]).map((x) => x[0]);
      }
      return out;
    }

    function row(s) {
      return h("tr", { "data-skill": s.dir, "data-key": s.location },
        h("td", { class: "name" },
          h("a", { href: `#/agent/${enc(agent)}/skill/${enc(s.dir)}` }, s.name),
          s.dir !== s.name ? h("div", { class: "muted" }, h("code", null, s.dir)) : null,
          s.version ? h("div", { class: "muted version" }, "version " + s.version) : null,
          s.always ? [" ", badge("always", "warn")] : null),
        h("td", { class: "scope" }, s.scope),
        h("td", { class: "verdict" }, s.eligible ? badge("offered", "yes") : badge("not offered", "no")),
        h("td", { class: "stage" }, s.stage || "—"),
        h("td", { class: "reasons" }, list(s.reasons)),
        h("td", { class: "hosts num" }, hostsText(s)),
        h("td", { class: "prompt" }, s.prompt || "—"),
        h("td", { class: "gov" }, govText(s.governance)));
    }

    function render() {
      if (!report) return;
      const sk = report.skills || [];
      const offered = sk.filter((s) => s.eligible).length;
      summary.textContent = `${fmt(sk.length)} skills, ${fmt(offered)} offered, ${fmt(sk.length - offered)} not offered.`;
      const vis = visible();
      const pages = Math.max(1, Math.ceil(vis.length / PAGE));
      page = Math.min(page, pages - 1);
      countEl.textContent = vis.length === sk.length ? `Showing all ${fmt(sk.length)} skills.` : `${fmt(vis.length)} of ${fmt(sk.length)} skills match.`;
      replace(listEl,
        table(`Skills of agent ${agent}`, ["Skill", "Scope", "Verdict", "Stage", "Reasons", { text: "Hosts", num: true }, "Prompt", "Governance"],
          vis.slice(page * PAGE, (page + 1) * PAGE).map(row)),
        pager("Skills", page, vis.length, (p) => { page = p; render(); $("#ag-list button.next")?.focus(); }));
    }

    function renderPrompt(block, etag) {
      promptPre.textContent = block === "" ? "(empty: no skill is offered; the agent pastes nothing)" : block;
      promptMeta.textContent = `ETag ${etag || "—"} · ${fmt(new TextEncoder().encode(block).length)} bytes · received ${new Date().toLocaleTimeString()}`;
    }

    return {
      title: `Agent ${agent}`,
      el: h("section", null,
        h("h1", null, "Agent ", h("code", null, agent)),
        S.role === "agent" && agent !== S.agent ? h("p", { class: "notice" }, `This is an agent token for ${S.agent}.`) : null,
        msg, summary,
        h("div", { class: "controls", role: "search" },
          h("label", { for: "ag-filter" }, "Filter", textIn),
          h("label", { for: "ag-verdict" }, "Verdict", verdictIn),
          h("label", { for: "ag-stage" }, "Stage", stageIn)),
        countEl, listEl,
        h("h2", null, "Prompt block"),
        h("p", { class: "muted" }, "As the agent receives it from GET /v1/agents/" + agent + "/prompt."),
        promptMeta, promptPre),
      async refresh(signal) {
        let raw;
        try {
          raw = await getRaw(skillsPath(agent), signal);
        } catch (e) {
          if (e instanceof ApiError && e.status === 403) {
            msg.replaceChildren(h("p", { class: "error" }, S.role === "agent"
              ? `This token cannot read agent ${agent}: it is an agent token for ${S.agent}.`
              : `The gateway refused agent ${agent}: ${e.message}`));
            listEl.replaceChildren();
            return "stop";
          }
          throw e;
        }
        if (raw === reportKey) return;
        reportKey = raw;
        report = JSON.parse(raw);
        lastReport = report;
        msg.replaceChildren();
        if (hits !== null) runSearch(); // new verdicts: the hits may have changed too
        render();
      },
      // poll follows the block: a long poll with the block's ETag; a new
      // block reads /skills again at once.
      async poll(signal) {
        let etag = "";
        while (!signal.aborted) {
          try {
            const res = await api(`v1/agents/${enc(agent)}/prompt` + (etag ? "?wait=" + WAIT : ""),
              { signal, headers: etag ? { "If-None-Match": etag } : {} });
            if (res.status === 200) {
              const block = await res.text();
              const changed = etag !== "";
              etag = res.headers.get("ETag") || "";
              renderPrompt(block, etag);
              if (changed) kick();
            } else if (res.status !== 304) {
              const e = await errorOf(res);
              promptMeta.textContent = "Cannot read the block: " + e.message;
              if (res.status === 401 || res.status === 403) return;
              await sleep(REFRESH_MS, signal);
            }
          } catch (e) {
            if (signal.aborted) return;
            await sleep(REFRESH_MS, signal);
          }
        }
      },
    };
  }

  // ---------------------------------------------------------------------
  // Skill

  // The host filter chain's fields: which node fact each reads and
  // whether one value suffices (else every value must be there).
  const FIELDS = {
    hostRoles: { any: true, has: (n, v) => (n.roles || []).includes(v) },
    capabilities: { any: false, has: (n, v) => (n.capabilities || []).includes(v) },
    anyCapabilities: { any: true, has: (n, v) => (n.capabilities || []).includes(v) },
    os: { any: true, has: (n, v) => n.os === v },
    env: { any: false, has: (n, v) => (n.env || []).includes(v) },
    bins: { any: false, has: (n, v) => !!(n.hostBinStatus && n.hostBinStatus[v] === true) },
    anyBins: { any: true, has: (n, v) => !!(n.hostBinStatus && n.hostBinStatus[v] === true) },
  };
  // lacking says what node n lacks to meet one requirement; "" when it
  // meets it.
  function lacking(req, n) {
    const fd = FIELDS[req.requirement];
    if (!fd) return "";
    const vals = req.values || [];
    if (fd.any) return vals.some((v) => fd.has(n, v)) ? "" : "needs one of " + vals.join(", ");
    const miss = vals.filter((v) => !fd.has(n, v));
    return miss.length ? "missing " + miss.join(", ") : "";
  }

  async function findSkill(agent, dir, name, signal) {
    const words = name || dir;
    if (hasWords(words)) {
      const r = await getJSON(skillsPath(agent, "q=" + enc(words) + "&limit=10000"), signal);
      const s = (r.skills || []).find((x) => x.dir === dir);
      if (s) return s;
    }
    const full = await getJSON(skillsPath(agent), signal);
    lastReport = full;
    return (full.skills || []).find((x) => x.dir === dir) || null;
  }

  // FACT is the node field each requirement reads.
  const FACT = { hostRoles: "roles", capabilities: "capabilities", anyCapabilities: "capabilities", os: "os", env: "env", bins: "hostBinStatus", anyBins: "hostBinStatus" };

  // allNodes reads every node, with only the facts the requirements fl
  // read (and of hostBinStatus only their binaries): a fleet of 10,000
  // nodes each asked for hundreds of binaries stays small in memory.
  async function allNodes(fl, signal, progress) {
    const fields = new Set(["id", "factsAt"]);
    const binNames = new Set();
    for (const r of fl) {
      if (FACT[r.requirement]) fields.add(FACT[r.requirement]);
      if (FACT[r.requirement] === "hostBinStatus") for (const v of r.values || []) binNames.add(v);
    }
    const out = [];
    let cursor = "";
    for (;;) {
      const q = new URLSearchParams({ limit: String(MATRIX_NODE_PAGE), fields: [...fields].join(",") });
      if (cursor) q.set("cursor", cursor);
      const r = await getJSON("v1/nodes?" + q, signal);
      for (const n of r.nodes || []) {
        if (n.hostBinStatus) {
          const b = {};
          for (const name of binNames) if (n.hostBinStatus[name] === true) b[name] = true;
          n.hostBinStatus = b;
        }
        out.push(n);
      }
      progress(out.length);
      if (!r.next) return out;
      cursor = r.next;
    }
  }

  function skillView(agent, dir) {
    let name = "";
    if (lastReport && lastReport.agent === agent) {
      const s = (lastReport.skills || []).find((x) => x.dir === dir);
      if (s) name = s.name;
    }
    let sk = null, skKey = "", nodes = null, nodesAt = 0, nodesEvery = NODES_EVERY_MS, nodesKey = "", mdDigest = null, mPage = 0;
    const msg = h("div", { role: "alert" });
    const title = h("h1", null, "Skill ", h("code", null, dir));
    const facts = h("section", { id: "sk-facts" }, h("p", { class: "muted" }, "Loading…"));
    const reqs = h("section", { id: "sk-reqs" });
    const source = h("section", { id: "sk-source" });
    const gov = h("section", { id: "sk-gov" });

    // promptTier: search answers (how this page reads one skill) carry no
    // prompt tier; the last whole /skills answer read does.
    function promptTier() {
      const r = lastReport && lastReport.agent === agent ? (lastReport.skills || []).find((x) => x.location === sk.location) : null;
      return r && r.prompt ? r.prompt : "see the agent page";
    }

    function renderFacts() {
      replace(title, "Skill ", h("code", null, sk.name));
      const hosts = sk.hosts || [];
      replace(facts, kv([
        ["Verdict", h("span", { id: "sk-verdict" }, sk.eligible ? badge("offered", "yes") : badge("not offered", "no"))],
        ["Stage", sk.stage || "—"],
        ["Reasons", h("div", { id: "sk-reasons" }, list(sk.reasons))],
        ["Prompt", sk.prompt || (sk.eligible ? promptTier() : "—")],
        ["Directory", h("code", null, sk.dir)],
        ["Location", h("code", null, sk.location)],
        ["Read path", h("code", null, sk.read_path)],
        ["Scope", sk.scope],
        ["Version", sk.version ? h("span", { id: "sk-version" }, sk.version) : "—"],
        sk.shadows ? ["Shadows", h("span", { id: "sk-shadows" }, h("code", null, sk.shadows.location),
          sk.shadows.version ? ` (version ${sk.shadows.version})` : " (no version)")] : null,
        ["Always", sk.always ? "yes" : "no"],
        sk.homepage ? ["Homepage", safeHomepage(sk.homepage)] : null,
        ["Matching hosts", hosts.length === 0 ? hostsText(sk) :
          `${fmt(hosts.length)}: ${hosts.slice(0, 20).join(", ")}${hosts.length > 20 ? ", …" : ""}`],
      ]));
    }

    function renderReqs() {
      const fl = sk.filtered || [];
      const head = h("h2", null, "Requirements on connected hosts");
      if (fl.length === 0) {
        let why = "No host requirements: any connected host will do.";
        if (sk.always) why = "Always offered: host requirements are not checked.";
        else if (sk.stage && sk.stage !== "runtime") why = `Left out at stage ${sk.stage}, before hosts are checked.`;
        else if ((sk.reasons || []).includes("no connected hosts")) why = "No host is connected.";
        replace(reqs, head, h("p", { class: "muted" }, why));
        return;
      }
      const summaryTable = table("Each requirement and how many hosts it rules out (among those that passed the ones before it)",
        ["Requirement", "Values", { text: "Rules out", num: true }],
        fl.map((r) => h("tr", null, h("td", null, r.requirement), h("td", null, (r.values || []).join(", ")), h("td", { class: "num" }, fmt(r.hosts)))));
      if (!canReadAll()) {
        replace(reqs, head, summaryTable,
          h("p", { class: "notice" }, `The host matrix needs the admin token (GET /v1/nodes); this is an agent token for ${S.agent}.`));
        return;
      }
      if (!nodes) {
        replace(reqs, head, summaryTable, h("p", { class: "muted", id: "sk-nodes-progress" }, "Reading the nodes…"));
        return;
      }
      const reporting = nodes.filter((n) => n.factsAt);
      const rows = reporting.map((n) => {
        const cells = fl.map((r) => lacking(r, n));
        return { n, cells, fails: cells.filter(Boolean).length };
      });
      rows.sort((a, b) => a.fails - b.fails || (a.n.id < b.n.id ? -1 : a.n.id > b.n.id ? 1 : 0));
      const pages = Math.max(1, Math.ceil(rows.length / PAGE));
      mPage = Math.min(mPage, pages - 1);
      const ok = rows.filter((r) => r.fails === 0).length;
      replace(reqs, head, summaryTable,
        h("p", { id: "sk-matrix-summary" }, `${fmt(ok)} of ${fmt(rows.length)} reporting hosts meet every requirement` +
          (nodes.length > reporting.length ? ` (${fmt(nodes.length - reporting.length)} more connected, no facts yet).` : ".")),
        table("Hosts against the requirements, closest first", ["Host", ...fl.map((r) => `${r.requirement}: ${(r.values || []).join(", ")}`), { text: "Failing", num: true }],
          rows.slice(mPage * PAGE, (mPage + 1) * PAGE).map((r) => h("tr", { "data-node": r.n.id, "data-key": r.n.id },
            h("th", { scope: "row" }, r.n.id),
            r.cells.map((c) => h("td", { class: c ? "cell-fail" : "cell-ok" }, c ? "✗ " + c : "✓ ok")),
            h("td", { class: "num fails" }, String(r.fails)))),
          { id: "sk-matrix" }),
        pager("Hosts", mPage, rows.length, (p) => { mPage = p; renderReqs(); }));
    }

    async function renderSource(signal) {
      const head = h("h2", null, "SKILL.md");
      try {
        const text = await getText(`v1/agents/${enc(agent)}/read?path=${enc(sk.read_path)}`, signal);
        replace(source, head, h("p", { class: "muted" }, `GET /v1/agents/${agent}/read?path=${sk.read_path}, shown as text.`),
          h("pre", { id: "sk-md", tabindex: "0", "aria-label": "SKILL.md text" }, text));
      } catch (e) {
        if (signal.aborted) throw e;
        replace(source, head, h("p", { class: "notice", id: "sk-md-error" }, `The gateway does not serve this file: ${e.message}`));
      }
    }

    function renderGov() {
      const g = sk.governance;
      const head = h("h2", null, "Governance");
      if (!g) {
        replace(gov, head, h("p", { class: "muted" }, "Not scanned (governance off, or left out by config first)."));
        return;
      }
      const fs = g.findings || [];
      replace(gov, head, kv([
        ["Digest", h("code", { id: "sk-digest" }, g.digest)],
        ["Score", String(g.score)],
        ["Band", g.band],
        ["Verdict", g.verdict],
        ["Mode", badge(g.mode, g.mode === "allow" ? "yes" : g.mode === "block" ? "no" : "warn")],
        ["Approved", g.approved ? "yes (skills.entries approve names this digest)" : "no"],
        g.signedBy ? ["Signed by", g.signedBy] : null,
        g.reason ? ["Why", h("span", { id: "sk-gov-reason" }, g.reason)] : null,
        ...(g.scanners || []).map((sc) => [`Scanner ${sc.name}`, sc.verdict + (sc.error ? `: ${sc.error}` : "")]),
      ]), fs.length === 0 ? h("p", { class: "muted" }, "No findings.") :
        table("Findings", ["Rule", "Severity", "Where", "Excerpt"], fs.map((x) => h("tr", { class: x.suppressed ? "suppressed" : null },
          h("td", null, x.rule, x.suppressed ? h("div", { class: "muted" }, `suppressed: ${x.suppressed.reason}` + (x.suppressed.expires ? ` (until ${x.suppressed.expires})` : "")) : null),
          h("td", null, x.severity), h("td", null, h("code", null, `${x.file}:${x.line}`)), h("td", null, h("code", null, x.excerpt))))));
    }

    return {
      title: `Skill ${dir}`,
      el: h("section", null,
        h("p", null, h("a", { href: `#/agent/${enc(agent)}` }, "← Agent " + agent)),
        title, msg, facts, reqs, source, gov),
      async refresh(signal) {
        let s;
        try {
          s = await findSkill(agent, dir, name, signal);
        } catch (e) {
          if (e instanceof ApiError && e.status === 403) {
            msg.replaceChildren(h("p", { class: "error" }, `This token cannot read agent ${agent}.`));
            return "stop";
          }
          throw e;
        }
        if (!s) {
          msg.replaceChildren(h("p", { class: "error" }, `No skill directory ${dir} in the view of agent ${agent}.`));
          return;
        }
        msg.replaceChildren();
        name = s.name;
        const key = JSON.stringify(s);
        const changed = key !== skKey;
        sk = s;
        skKey = key;
        if (changed) { renderFacts(); renderGov(); }
        const digest = sk.governance ? sk.governance.digest : "";
        if (mdDigest !== digest + "|" + sk.stage) {
          mdDigest = digest + "|" + sk.stage;
          await renderSource(signal);
        }
        let nodesChanged = false;
        const fl = sk.filtered || [];
        if (canReadAll() && fl.length > 0 && (changed || !nodes || Date.now() - nodesAt > nodesEvery)) {
          const t0 = performance.now();
          const ns = await allNodes(fl, signal, (n) => {
            const p = $("#sk-nodes-progress");
            if (p) p.textContent = `Reading the nodes… ${fmt(n)} so far.`;
          });
          nodesAt = Date.now();
          nodesEvery = Math.max(NODES_EVERY_MS, 5 * (performance.now() - t0));
          const nk = JSON.stringify([fl, ns]);
          if (nk !== nodesKey) { nodes = ns; nodesKey = nk; nodesChanged = true; }
        }
        if (changed || nodesChanged) renderReqs();
      },
    };
  }

  // ---------------------------------------------------------------------
  // Nodes

  // The governance page: what governance holds, and why, with the exact
  // command that approves or suppresses it. Read-only: the config file is
  // the one source of truth, edited by `skillgate governance …`.
  const shq = (v) => /^[A-Za-z0-9_./:@%+=,-]+$/.test(v) ? v : "'" + String(v).replace(/'/g, "'\\''") + "'";
  function governanceView() {
    if (!canReadAll()) {
      return {
        title: "Governance",
        el: h("section", null, h("h1", null, "Governance"),
          h("p", { class: "notice", id: "gov-forbidden" }, `The governance page needs the admin token; this is an agent token for ${S.agent}.`)),
      };
    }
    const head = h("p", { id: "gov-mode", class: "muted" }, "Loading…");
    const listEl = h("div", { id: "gov-list" });
    let last = "";
    function findingRows(g, dir) {
      return (g.findings || []).map((f) => h("tr", { class: f.suppressed ? "suppressed" : null },
        h("td", null, badge(f.severity, f.severity === "error" ? "no" : f.severity === "warn" ? "warn" : "")),
        h("td", null, h("code", null, f.rule)),
        h("td", null, h("code", null, `${f.file}:${f.line}`)),
        h("td", null, h("code", { class: "excerpt" }, f.excerpt)),
        h("td", null, f.suppressed
          ? `suppressed: ${f.suppressed.reason}` + (f.suppressed.expires ? ` (until ${f.suppressed.expires})` : "")
          : h("code", { class: "cmd" }, `skillgate governance suppress ${shq(dir)} --rule ${shq(f.rule)}` +
            (f.file ? ` --file ${shq(f.file)}` : "") + (f.line ? ` --line ${f.line}` : "") + ` --reason '…' --config FILE`))));
    }
    function item(q) {
      const g = q.governance;
      const why = q.enforced ? q.reason : g && g.reason ? `${g.reason} (not enforced: observe)` : "not enforced (observe)";
      const parts = [
        h("h2", null, q.name, " ", h("span", { class: "muted" }, h("code", null, q.location))),
        h("p", { class: "gov-why" }, why),
      ];
      if (g) {
        parts.push(kv([
          ["Mode", badge(g.mode, g.mode === "block" ? "no" : g.mode === "allow" ? "yes" : "warn")],
          ["Risk", `${g.band} ${g.score}, verdict ${g.verdict}`],
          ["Digest", h("code", null, g.digest)],
          ["Signed by", g.signedBy || "no trusted publisher"],
          ["Approved", g.approved ? "yes" : "no"],
        ]));
        if ((g.findings || []).length) {
          parts.push(table(`Findings of ${q.name}`, ["Severity", "Rule", "Where", "Excerpt", "Suppression"], findingRows(g, q.dir)));
        }
        for (const sc of g.scanners || []) {
          parts.push(h("p", { class: "gov-scanner" }, `Scanner ${sc.name}: `, badge(sc.verdict, sc.verdict === "block" || sc.verdict === "error" ? "no" : sc.verdict === "allow" ? "yes" : "warn"),
            sc.verdict === "pending" ? "" : ` (${sc.ms} ms)`, sc.error ? ` ${sc.error}` : ""));
          if ((sc.findings || []).length) {
            parts.push(table(`Findings of scanner ${sc.name}`, ["Severity", "Rule", "Where", "Message"], sc.findings.map((f) => h("tr", null,
              h("td", null, f.severity), h("td", null, h("code", null, `${sc.name}:${f.rule}`)), h("td", null, h("code", null, `${f.file}:${f.line}`)), h("td", null, f.message)))));
          }
        }
        if (!g.approved && g.mode !== "allow") {
          parts.push(h("p", null, "To approve exactly this content: ",
            h("code", { class: "cmd gov-approve" }, `skillgate governance approve ${shq(q.dir)} --config FILE --store STORE`)));
        }
      }
      return h("section", { class: "card gov-item", "data-key": q.location }, parts);
    }
    return {
      title: "Governance",
      el: h("section", null, h("h1", null, "Governance"), head, listEl),
      async refresh(signal) {
        let raw;
        try {
          raw = await getRaw("v1/governance", signal);
        } catch (e) {
          if (e instanceof ApiError && e.status === 503) {
            head.textContent = e.message;
            return;
          }
          throw e;
        }
        if (raw === last) return;
        last = raw;
        const q = JSON.parse(raw);
        head.textContent = `Gateway governance mode: ${q.mode}. ${q.skills.length} skill(s) held or awaiting review, in location order. ` +
          "Decisions are written into the config file with skillgate governance approve, suppress or hold.";
        replace(listEl, q.skills.length === 0 ? h("p", { class: "muted" }, "Nothing is held.") : q.skills.map(item));
      },
    };
  }

  function nodesView() {
    if (!canReadAll()) {
      return {
        title: "Nodes",
        el: h("section", null, h("h1", null, "Nodes"),
          h("p", { class: "notice", id: "nodes-forbidden" }, `The nodes page needs the admin token; this is an agent token for ${S.agent}.`)),
      };
    }
    const f = { id: "", os: "", role: "", missing: "" };
    let start = { cursor: "", after: "" }; // where the page on screen starts
    const back = []; // the starts of the pages before it
    let next = null, lastKey = "", total = null;
    const inputs = {
      id: h("input", { id: "nd-id", type: "search", autocomplete: "off", spellcheck: "false", placeholder: "part of the id" }),
      os: h("input", { id: "nd-os", type: "text", autocomplete: "off", spellcheck: "false", placeholder: "linux" }),
      role: h("select", { id: "nd-role" }, h("option", { value: "" }, "any"), h("option", { value: "execution" }, "execution"), h("option", { value: "specialized" }, "specialized")),
      missing: h("input", { id: "nd-missing", type: "text", autocomplete: "off", spellcheck: "false", placeholder: "gh" }),
    };
    let timer = 0;
    for (const [k, el] of Object.entries(inputs)) {
      el.addEventListener(el.tagName === "SELECT" ? "change" : "input", () => {
        f[k] = el.value.trim();
        clearTimeout(timer);
        timer = setTimeout(() => { start = { cursor: "", after: "" }; back.length = 0; lastKey = ""; kick(); }, 250);
      });
    }
    const countEl = h("p", { id: "nd-count", class: "muted", "aria-live": "polite" });
    const listEl = h("div", { id: "nd-list" }, h("p", { class: "muted" }, "Loading…"));
    const filtered = () => f.id || f.os || f.role || f.missing;

    function match(n) {
      if (f.id && !n.id.toLowerCase().includes(f.id.toLowerCase())) return false;
      if (f.os && n.os !== f.os.toLowerCase()) return false;
      if (f.role && !(n.roles || []).includes(f.role)) return false;
      if (f.missing && n.hostBinStatus && n.hostBinStatus[f.missing] === true) return false;
      return true;
    }

    // scan reads /v1/nodes pages from start until a screenful of nodes
    // match (or the list ends): never more than NODE_PAGE nodes on screen.
    async function scan(signal) {
      let cursor = start.cursor, after = start.after, scanned = 0;
      const rows = [];
      for (;;) {
        const q = new URLSearchParams({ limit: String(NODE_PAGE) });
        if (cursor) q.set("cursor", cursor);
        const r = await getJSON("v1/nodes?" + q, signal);
        const ns = r.nodes || [];
        let i = 0;
        if (after) {
          const j = ns.findIndex((n) => n.id === after);
          i = j >= 0 ? j + 1 : ns.findIndex((n) => n.id > after);
          if (i < 0) i = ns.length;
          after = "";
        }
        for (; i < ns.length; i++) {
          scanned++;
          if (!match(ns[i])) continue;
          if (rows.length === NODE_PAGE) return { rows, scanned, next: { cursor, after: rows[rows.length - 1].id } };
          rows.push(ns[i]);
        }
        if (!r.next) return { rows, scanned, next: null };
        cursor = r.next;
      }
    }

    // bins shows the binaries a node has, and how many of those the
    // gateway asked for it lacks (the list folded: a fleet's skills may
    // ask for hundreds).
    function bins(n) {
      const st = n.hostBinStatus || {};
      const names = Object.keys(st).sort();
      const have = names.filter((b) => st[b] === true);
      const miss = names.filter((b) => st[b] !== true);
      if (names.length === 0) return "—";
      return [
        have.length ? h("div", null, "✓ " + have.join(", ")) : null,
        f.missing && st[f.missing] !== true ? h("div", { class: "cell-fail" }, "✗ " + f.missing) : null,
        miss.length ? h("details", null, h("summary", null, `${fmt(miss.length)} missing`), h("div", { class: "cell-fail" }, miss.join(", "))) : null,
      ];
    }

    function render(res) {
      const from = back.length * NODE_PAGE; // approximate with filters: pages hold NODE_PAGE matches
      countEl.textContent = res.rows.length === 0 ? "No node matches." :
        `Nodes ${fmt(from + 1)}–${fmt(from + res.rows.length)}` + (!filtered() && total !== null ? ` of ${fmt(total)} connected.` : " matching the filter.");
      replace(listEl,
        table("Connected nodes, in id order", ["Node", "Replica", "OS", "Roles", "Capabilities", "Env names", "Binaries", "Connected", "Facts"],
          res.rows.map((n) => h("tr", { "data-node": n.id, "data-key": n.id },
            h("th", { scope: "row" }, n.id),
            h("td", null, n.replica || "—"),
            h("td", null, n.os),
            h("td", null, (n.roles || []).join(", ")),
            h("td", null, (n.capabilities || []).join(", ")),
            h("td", null, (n.env || []).join(", ") || "—"),
            h("td", { class: "bins" }, bins(n)),
            h("td", null, time(n.connectedAt)),
            h("td", null, n.factsAt ? time(n.factsAt) : "no facts yet")))),
        h("div", { class: "pager", role: "group", "aria-label": "Nodes pages" },
          h("button", { type: "button", class: "prev", disabled: back.length === 0, onclick: () => { start = back.pop(); lastKey = ""; kick(); } }, "Previous"),
          h("button", { type: "button", class: "next", disabled: !res.next, onclick: () => { back.push(start); start = next; lastKey = ""; kick(); } }, "Next")));
    }

    return {
      title: "Nodes",
      el: h("section", null, h("h1", null, "Nodes"),
        h("div", { class: "controls", role: "search" },
          h("label", { for: "nd-id" }, "Id", inputs.id),
          h("label", { for: "nd-os" }, "OS", inputs.os),
          h("label", { for: "nd-role" }, "Role", inputs.role),
          h("label", { for: "nd-missing" }, "Missing binary", inputs.missing)),
        countEl, listEl),
      async refresh(signal) {
        const [res, ready] = await Promise.all([scan(signal), getJSON("readyz", signal, [200, 503])]);
        total = ready.nodes;
        next = res.next;
        const key = JSON.stringify([res.rows, !!res.next, total]);
        if (key === lastKey) return;
        lastKey = key;
        render(res);
      },
    };
  }

  // ---------------------------------------------------------------------
  // Router and the live refresh of the page on screen.

  function sleep(ms, signal) {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      if (signal) signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
    });
  }

  // cur is the page on screen: its view, the abort controller of its
  // requests, its refresh timer, and whether a refresh runs.
  let cur = null;
  const liveEl = () => $("#live");

  function setLive(text) {
    const el = liveEl();
    if (el) el.textContent = text;
  }

  function stopLive() {
    if (!cur) return;
    if (cur.ctrl) cur.ctrl.abort();
    clearTimeout(cur.timer);
    cur.ctrl = null;
    cur.again = false;
  }

  function startLive() {
    if (!cur || !cur.view.refresh || document.hidden) return;
    cur.ctrl = new AbortController();
    const signal = cur.ctrl.signal;
    if (cur.view.poll) cur.view.poll(signal).catch(() => {});
    tick(cur, signal);
  }

  // tick refreshes the page's data, then again after REFRESH_MS (longer
  // when a refresh is slow: three times its duration, so that a big fleet
  // never has the page do nothing but read).
  async function tick(c, signal) {
    if (c !== cur || signal.aborted) return;
    if (c.running && !c.running.aborted) { c.again = true; return; }
    c.running = signal; // the signal of the refresh under way
    clearTimeout(c.timer);
    const t0 = performance.now();
    let stop = false;
    try {
      stop = (await c.view.refresh(signal)) === "stop";
      if (!signal.aborted) setLive(stop ? "Not following: this token cannot read this page." : `Live · updated ${new Date().toLocaleTimeString()}`);
    } catch (e) {
      if (!signal.aborted && c === cur) setLive(`Cannot refresh: ${e.message} (retrying)`);
    }
    if (c.running === signal) c.running = null;
    if (signal.aborted || c !== cur || stop) return;
    const d = performance.now() - t0;
    if (c.again) { c.again = false; tick(c, signal); return; }
    c.timer = setTimeout(() => tick(c, signal), Math.max(REFRESH_MS, 3 * d));
  }

  // kick refreshes the current page now (a filter changed, a new block).
  function kick() {
    if (cur && cur.ctrl && !cur.ctrl.signal.aborted) tick(cur, cur.ctrl.signal);
  }

  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      stopLive();
      setLive("Paused while this tab is hidden.");
    } else {
      startLive();
    }
  });

  function updateChrome() {
    const signed = S.role !== "";
    $("#nav").hidden = !signed;
    $("#session").hidden = !signed;
    $("#nav-nodes").parentElement.hidden = !canReadAll();
    $("#nav-governance").parentElement.hidden = !canReadAll();
    $("#nav-agent").setAttribute("href", `#/agent/${enc(S.agent)}`);
    $("#nav-agent").textContent = `Agent ${S.agent}`;
    $("#who").textContent = S.role === "admin" ? "Signed in with the admin token"
      : S.role === "agent" ? `Agent token for ${S.agent}`
        : S.role === "open" ? "No token (the gateway has none)" : "";
    const hash = location.hash;
    for (const a of document.querySelectorAll("#nav a")) {
      const href = a.getAttribute("href");
      const on = hash === href || (href.startsWith("#/agent/") && hash.startsWith(href + "/"));
      if (on) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
  }

  function parse(hash) {
    const parts = hash.replace(/^#\/?/, "").split("/").map((p) => {
      try { return decodeURIComponent(p); } catch (_) { return null; }
    });
    if (parts.includes(null)) return null;
    if (parts[0] === "overview" && parts.length === 1) return () => overviewView();
    if (parts[0] === "nodes" && parts.length === 1) return () => nodesView();
    if (parts[0] === "governance" && parts.length === 1) return () => governanceView();
    if (parts[0] === "agent" && parts.length === 2 && validAgentID(parts[1])) {
      return () => {
        if (canReadAll() && S.agent !== parts[1]) { S.agent = parts[1]; saveSession(); } // the agent the overview and the nav show
        return agentView(parts[1]);
      };
    }
    if (parts[0] === "agent" && parts.length === 4 && parts[2] === "skill" && validAgentID(parts[1]) && parts[3]) {
      return () => skillView(parts[1], parts[3]);
    }
    return null;
  }

  let first = true;
  function route() {
    stopLive();
    const main = $("#main");
    let view;
    if (S.role === "") {
      if (location.hash && location.hash !== "#/signin") afterSignIn = location.hash;
      view = signinView();
    } else {
      const make = parse(location.hash);
      if (!make) {
        location.replace(home());
        return;
      }
      view = make();
    }
    cur = { view, ctrl: null, timer: 0, running: null, again: false };
    updateChrome();
    document.title = `${view.title} · skillgate console`;
    main.replaceChildren(view.el);
    setLive(view.refresh ? "Loading…" : "");
    if (view.focus) view.focus.focus();
    else if (!first) main.focus();
    first = false;
    startLive();
  }

  $("#signout").addEventListener("click", () => signOut(""));
  window.addEventListener("hashchange", route);
  route();
})();
