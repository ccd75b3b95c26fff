// detente dashboard: live panels over the event stream. Plain script, no build step.
//
// - Reads /v1/events/stream with fetch() and parses Server-Sent Events itself: events are
//   named by type (claim.announced, ...) and EventSource has no wildcard listener, and
//   EventSource cannot send the Bearer token an authenticating server will ask for.
// - On every event the panels are fetched again (/dashboard/panels, debounced) and
//   swapped in place; a card holding focus or a half-filled form is kept as it is.
// - Reconnects with Last-Event-ID after a drop (backoff up to 10 s) and reloads the page
//   on `event: resync`.
// - Lease timers, meeting deadlines and heartbeat ages tick every second against the
//   server's clock (offset measured from each panel read).
// - Auth hook: a 401 from any request opens the token dialog; the token is kept in
//   sessionStorage and sent as `Authorization: Bearer`.
(() => {
  "use strict";
  const body = document.body;
  const TOKEN_KEY = "detente.token";
  const NAME_KEY = "detente.arbitrator";
  let offset = Date.parse(body.dataset.now) - Date.now();
  let lastSeq = Number(body.dataset.seq) || 0;

  // ------------------------------------------------------------------ auth hook
  let asking = null;
  function askToken() {
    if (asking) return asking;
    const dialog = document.getElementById("auth");
    const input = document.getElementById("auth-token");
    asking = new Promise((resolve) => {
      dialog.addEventListener("close", function done() {
        dialog.removeEventListener("close", done);
        if (input.value) sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        input.value = "";
        asking = null;
        resolve();
      });
      dialog.showModal();
      input.focus();
    });
    return asking;
  }
  function headers(extra) {
    const h = Object.assign({ Accept: "application/json" }, extra || {});
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) h.Authorization = "Bearer " + token;
    return h;
  }
  async function api(path, options) {
    const opts = options || {};
    const res = await fetch(path, Object.assign({}, opts, { headers: headers(opts.headers) }));
    if (res.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      await askToken();
      return api(path, options);
    }
    return res;
  }

  // ------------------------------------------------------------------ timers
  function fmt(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    const pad = (n) => String(n).padStart(2, "0");
    return h ? `${h}:${pad(m)}:${pad(r)}` : `${m}:${pad(r)}`;
  }
  function tick() {
    const now = Date.now() + offset;
    for (const el of document.querySelectorAll("[data-expires]")) {
      const left = (Date.parse(el.dataset.expires) - now) / 1000;
      const ttl = Number(el.dataset.ttl) || 1;
      el.textContent = left > 0 ? fmt(left) : "expired";
      el.dataset.left = String(Math.max(0, Math.floor(left)));
      el.classList.toggle("low", left > 0 && left < 0.2 * ttl);
      el.classList.toggle("expired", left <= 0);
    }
    for (const el of document.querySelectorAll("[data-deadline]")) {
      const left = (Date.parse(el.dataset.deadline) - now) / 1000;
      el.textContent = left > 0 ? fmt(left) : "due";
    }
    for (const el of document.querySelectorAll("[data-since]")) {
      el.textContent = fmt((now - Date.parse(el.dataset.since)) / 1000);
    }
  }

  // ------------------------------------------------------------------ panels
  function swap(panel, html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    // Keep what the user is in the middle of: a card with focus or a touched form.
    for (const fresh of tpl.content.querySelectorAll("[data-key]")) {
      const old = panel.querySelector(`[data-key="${CSS.escape(fresh.dataset.key)}"]`);
      if (!old) continue;
      const busy = old.contains(document.activeElement) || old.querySelector("form[data-dirty]");
      if (!busy) continue;
      if (old.dataset.version !== fresh.dataset.version) old.classList.add("stale");
      fresh.replaceWith(old);
    }
    const open = new Set([...panel.querySelectorAll("details[open]")].map((d) => d.id));
    const focused = document.activeElement && panel.contains(document.activeElement)
      ? document.activeElement.id : "";
    panel.replaceChildren(tpl.content);
    for (const d of panel.querySelectorAll("details")) if (open.has(d.id)) d.open = true;
    if (focused && !panel.contains(document.activeElement)) {
      const again = document.getElementById(focused);
      if (again) again.focus();
    }
  }

  let timer = null, inflight = false, again = false;
  function schedule() {
    if (timer === null) timer = setTimeout(refresh, 80);
  }
  function query() {
    return document.getElementById("q").value.trim();
  }
  async function refresh() {
    timer = null;
    if (inflight) { again = true; return; }
    inflight = true;
    try {
      const params = new URLSearchParams({ group: body.dataset.group || "dir" });
      if (query()) params.set("q", query());
      const res = await api("/dashboard/panels?" + params);
      if (!res.ok) throw new Error("panels: HTTP " + res.status);
      const data = await res.json();
      offset = Date.parse(data.now) - Date.now();
      for (const [name, html] of Object.entries(data.panels)) {
        const panel = document.getElementById("panel-" + name);
        if (panel) swap(panel, html);
      }
      const search = document.getElementById("panel-search");
      if (data.search !== null) { swap(search, data.search); search.hidden = false; }
      document.getElementById("seq").textContent = String(data.seq);
      body.dataset.seq = String(data.seq);
      // How many refreshes have landed (a test waits for the catch-up after going live).
      body.dataset.refreshed = String((Number(body.dataset.refreshed) || 0) + 1);
      tick();
    } catch (err) {
      setLive("error", "could not refresh: " + err.message);
    } finally {
      inflight = false;
      if (again) { again = false; schedule(); }
    }
  }

  // ------------------------------------------------------------------ event stream
  const live = document.getElementById("live");
  function setLive(state, text) {
    live.dataset.state = state;
    live.textContent = text;
  }
  let backoff = 500;
  async function stream() {
    for (;;) {
      try {
        const res = await api("/v1/events/stream", {
          headers: { Accept: "text/event-stream", "Last-Event-ID": String(lastSeq) },
          cache: "no-store",
        });
        if (!res.ok || !res.body) throw new Error("HTTP " + res.status);
        setLive("live", "live");
        backoff = 500;
        schedule(); // catch up with whatever happened while we were away
        await readEvents(res.body);
        throw new Error("stream ended");
      } catch (err) {
        setLive("reconnecting", "reconnecting…");
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 10000);
      }
    }
  }
  async function readEvents(source) {
    const reader = source.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "", id = "", type = "", data = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === "") {
          if (data.length || type) dispatch(id, type || "message", data.join("\n"));
          type = ""; data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const at = line.indexOf(":");
        const field = at < 0 ? line : line.slice(0, at);
        let val = at < 0 ? "" : line.slice(at + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "id") id = val;
        else if (field === "event") type = val;
        else if (field === "data") data.push(val);
      }
    }
  }
  function dispatch(id, type, data) {
    if (type === "resync") { location.reload(); return; }
    const seq = Number(id);
    if (Number.isFinite(seq) && seq > lastSeq) lastSeq = seq;
    schedule();
  }

  // ------------------------------------------------------------------ actions
  function resolution(form) {
    const f = new FormData(form);
    const type = f.get("type");
    if (type === "serialize") return { type, first: f.get("first"), then: f.get("then") };
    if (type === "handoff") {
      return { type, fromClaimId: f.get("fromClaimId"), toClaimId: f.get("toClaimId") };
    }
    if (type === "joint") return { type, claimIds: f.getAll("joint") };
    const assignments = [];
    for (const [key, value] of f.entries()) {
      if (!key.startsWith("split:")) continue;
      const targets = String(value).split(",").map((t) => t.trim()).filter(Boolean);
      assignments.push({ claimId: key.slice(6), targets });
    }
    return { type: "split_ownership", assignments };
  }
  async function resolve(form) {
    const out = form.querySelector(".outcome");
    const by = form.elements.resolvedBy.value.trim();
    localStorage.setItem(NAME_KEY, by);
    out.className = "outcome";
    out.textContent = "resolving…";
    const res = await api(`/v1/meetings/${encodeURIComponent(form.dataset.meetingId)}/resolve`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        expectedMeetingRevision: Number(form.dataset.revision),
        resolution: resolution(form),
        resolvedBy: by,
      }),
    });
    if (res.ok) {
      out.textContent = "resolved";
      delete form.dataset.dirty;
      document.activeElement.blur();
      schedule();
      return;
    }
    const problem = await res.json().catch(() => ({}));
    out.classList.add("bad");
    if (res.status === 409 && problem.code === "revision_conflict") {
      out.textContent = "someone else changed it: reload ";
      const button = document.createElement("button");
      button.type = "button";
      button.className = "reload";
      button.textContent = "Reload";
      button.addEventListener("click", () => {
        delete form.dataset.dirty;
        button.blur();
        schedule();
      });
      out.append(button);
      button.focus();
    } else {
      out.textContent = problem.detail || ("HTTP " + res.status);
    }
  }

  document.addEventListener("submit", (ev) => {
    const form = ev.target;
    if (form.matches("form.resolve")) { ev.preventDefault(); resolve(form); }
    if (form.id === "search" && query()) { ev.preventDefault(); history.replaceState(null, "", "?q=" + encodeURIComponent(query())); schedule(); }
  });
  document.addEventListener("input", (ev) => {
    const form = ev.target.closest && ev.target.closest("form.resolve");
    if (form) form.dataset.dirty = "1";
  });
  document.addEventListener("change", (ev) => {
    const el = ev.target;
    if (el.name === "group" && el.closest("#panel-claims")) {
      body.dataset.group = el.value;
      schedule();
    }
    const form = el.closest && el.closest("form.resolve");
    if (form && el.name === "type") {
      for (const fs of form.querySelectorAll("fieldset[data-for]")) fs.hidden = fs.dataset.for !== el.value;
    }
  });
  document.addEventListener("focusin", (ev) => {
    const el = ev.target;
    if (el.name === "resolvedBy" && !el.value) el.value = localStorage.getItem(NAME_KEY) || "";
  });

  // A server that asks for credentials says so before the page reads anything.
  async function start() {
    try {
      const res = await fetch("/dashboard/config", { headers: { Accept: "application/json" } });
      const config = res.ok ? await res.json() : {};
      if (config.auth && config.auth.required && !sessionStorage.getItem(TOKEN_KEY)) {
        await askToken();
        schedule();
      }
    } catch (err) {
      // The stream below reports the server as unreachable and keeps retrying.
    }
    stream();
  }

  setInterval(tick, 1000);
  tick();
  start();
})();
