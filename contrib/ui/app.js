// SPDX-License-Identifier: GPL-2.0-or-later
// agentrun ui: the page (docs/sandbox.md, "The web dashboard").
// No framework, no build step. Every string that comes from a sandbox
// (host names, reasons, paths, diffs) is put in the page with
// textContent, never as HTML.
'use strict';

let csrf = null;
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

async function api(path, body) {
  const opts = { credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    opts.method = 'POST';
    opts.headers['Content-Type'] = 'application/json';
    opts.headers['X-CSRF-Token'] = csrf;
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  const type = r.headers.get('Content-Type') || '';
  const data = type.startsWith('application/json') ? await r.json() : await r.text();
  if (!r.ok) throw new Error(typeof data === 'object' ? data.error : data);
  return data;
}

function showResult(msg, error) {
  const p = $('answer-result');
  p.textContent = msg;
  p.className = 'result' + (error ? ' error' : '');
}

async function answer(sandbox, id, ans) {
  try {
    const r = await api('/api/answer', { sandbox, id: String(id), answer: ans });
    showResult(`${sandbox} request ${id}: ${ans}` + (r.diff ? `\n${r.diff}` : ''), false);
  } catch (e) {
    showResult(`${sandbox} request ${id}: ${e.message}`, true);
  }
  refresh();
}

async function refresh() {
  let data;
  try {
    data = await api('/api/sandboxes');
  } catch (e) {
    $('status').textContent = 'error: ' + e.message;
    return;
  }
  const list = $('sandboxes');
  list.replaceChildren();
  const tbody = $('requests').querySelector('tbody');
  tbody.replaceChildren();
  let n = 0;
  for (const sb of data.sandboxes) {
    const chip = el('button', sb.sandbox, 'sandbox');
    chip.title = 'the policy of ' + sb.sandbox;
    chip.addEventListener('click', () => policy(sb.sandbox));
    list.append(chip);
    for (const q of sb.requests || []) {
      n++;
      const tr = el('tr');
      tr.dataset.sandbox = sb.sandbox;
      tr.dataset.id = q.id;
      tr.append(el('td', sb.sandbox), el('td', q.id), el('td', q.target),
        el('td', q.address || '-'), el('td', q.waiting), processCell(q),
        el('td', q.from === 'agent'
          ? `asked by the agent: ${q.explanation || '(no explanation)'}` : q.reason, 'reason'));
      const td = el('td');
      for (const a of ['once', 'session', 'always', 'refuse']) {
        const b = el('button', a, a === 'refuse' ? 'refuse' : 'grant');
        b.dataset.answer = a;
        b.addEventListener('click', () => answer(sb.sandbox, q.id, a));
        td.append(b);
      }
      tr.append(td);
      tbody.append(tr);
    }
  }
  $('no-sandboxes').hidden = data.sandboxes.length > 0;
  $('requests').hidden = n === 0;
  $('no-requests').hidden = n > 0;
}

// The process that asked (pid inside the sandbox, and on the host; its
// executable and command line): the agent's words, put in as text.
function processCell(q) {
  const td = el('td', null, 'process');
  if (q.pid === null || q.pid === undefined) {
    td.textContent = '-';
    return td;
  }
  td.append(el('div', `pid ${q.sandbox_pid} (host ${q.pid})`, 'pid'));
  if (q.exe) td.append(el('div', q.exe, 'exe'));
  if (q.cmdline) td.append(el('div', q.cmdline, 'cmdline'));
  return td;
}

// a flood of events asks for one refresh, not one each
let refreshTimer = null;
function refreshSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 250);
}

function eventText(sandbox, ev) {
  const parts = [ev.time || '', sandbox, ev.event || 'event'];
  for (const k of ['answer', 'host', 'port', 'address', 'allowed', 'target', 'path', 'exe', 'reason', 'interface']) {
    if (ev[k] !== undefined && ev[k] !== null) parts.push(`${k}=${typeof ev[k] === 'object' ? JSON.stringify(ev[k]) : ev[k]}`);
  }
  if (ev.request && ev.request.target) parts.push(`request ${ev.request.id} ${ev.request.target}`);
  return parts.join(' ');
}

function addEvent(sandbox, ev) {
  const ol = $('events');
  const li = el('li', eventText(sandbox, ev));
  if (ev.allowed === false || ev.answer === 'refuse') li.className = 'deny';
  ol.prepend(li);
  while (ol.children.length > 500) ol.lastChild.remove();
}

function stream() {
  const es = new EventSource('/api/events');
  es.onopen = () => { $('status').textContent = 'live'; };
  es.onerror = () => { $('status').textContent = 'reconnecting…'; };
  es.addEventListener('sandboxes', () => { refreshSoon(); overlays(); });
  es.onmessage = (m) => {
    let d;
    try { d = JSON.parse(m.data); } catch (e) { return; }
    addEvent(d.sandbox, d.event || {});
    const kind = d.event && d.event.event;
    if (kind === 'request' || kind === 'answer') refreshSoon();
    // a grant or an answer changes the policy in force
    if (shownPolicy === d.sandbox &&
        (kind === 'answer' || kind === 'allow' || kind === 'revoke')) policySoon();
  };
}

let shownPolicy = null;
let policyTimer = null;
function policySoon() {
  if (policyTimer) return;
  policyTimer = setTimeout(() => { policyTimer = null; if (shownPolicy) policy(shownPolicy); }, 200);
}

// The network policy in force (the control plane's: the allowlist it
// started with, the live grants, the session and always answers; a
// --secret by its name and hosts only).
function showNet(live) {
  const tbody = $('policy-net').querySelector('tbody');
  const none = $('policy-net-none');
  tbody.replaceChildren();
  const rows = [];
  if (!live) {
    none.textContent = 'The sandbox does not run: no policy in force.';
  } else if (!live.egress) {
    none.textContent = 'No egress proxy: the network is as its mode says (none or the host\'s).';
  } else {
    none.textContent = live.ask ? 'Anything else is asked (--net ask).' : 'Anything else is refused.';
    for (const a of live.allow) rows.push(['allow', a, 'start (--net allow, profile)']);
    for (const sec of live.secrets) rows.push(['secret ' + sec.name, sec.hosts.join(', '), 'start (--secret)']);
    for (const g of live.grants) rows.push(['live grant --' + g.kind, g.target, 'agentrun sandbox allow']);
    for (const x of live.session) rows.push([x.answer, x.target, `answer by uid ${x.uid} (${x.interface})`]);
  }
  none.hidden = false;
  for (const [k, v, from] of rows) {
    const tr = el('tr');
    tr.append(el('td', k), el('td', v), el('td', from));
    tbody.append(tr);
  }
  $('policy-net').hidden = rows.length === 0;
}

// What a sandbox was made of (its session's config, never its
// environment): workspace, network, protections, Landlock, mounts; and
// the network policy in force.
async function policy(name) {
  shownPolicy = name;
  const box = $('policy');
  const facts = $('policy-facts');
  const tbody = $('policy-mounts').querySelector('tbody');
  $('policy-title').textContent = `Policy of ${name}`;
  box.hidden = false;
  let p;
  try {
    p = await api(`/api/policy?name=${encodeURIComponent(name)}`);
  } catch (e) {
    facts.replaceChildren(el('dd', e.message, 'result error'));
    tbody.replaceChildren();
    return;
  }
  // replaced once the answer is here: a refetch does not flicker
  facts.replaceChildren();
  tbody.replaceChildren();
  for (const [k, label] of [['workspace', 'Workspace'], ['net', 'Network'],
    ['protections', 'Protections'], ['landlock', 'Landlock']]) {
    facts.append(el('dt', label), el('dd', p[k] === null ? '-' : p[k]));
  }
  for (const m of p.mounts) {
    const tr = el('tr');
    tr.append(el('td', m.destination), el('td', m.mode), el('td', m.source || ''));
    tbody.append(tr);
  }
  showNet(p.live);
}

async function showDiff(name, path) {
  const pre = $('diff');
  try {
    pre.textContent = await api(`/api/diff?name=${encodeURIComponent(name)}` +
      (path ? `&path=${encodeURIComponent(path)}` : ''));
  } catch (e) {
    pre.textContent = e.message;
  }
  pre.hidden = false;
}

async function changes(name) {
  const box = $('changes');
  box.replaceChildren(el('h3', `Changes of ${name}`));
  let text;
  try {
    text = await api(`/api/changes?name=${encodeURIComponent(name)}`);
  } catch (e) {
    box.append(el('p', e.message, 'result error'));
    return;
  }
  for (const line of text.split('\n').filter((l) => l.length)) {
    const div = el('div', null, 'change');
    const m = /^(..) (.*?)( \(.*\))?$/.exec(line);
    div.append(el('span', line + ' '));
    if (m && !m[2].startsWith('"')) {
      const b = el('button', 'diff');
      b.addEventListener('click', () => showDiff(name, m[2].replace(/\/$/, '')));
      div.append(b);
    }
    box.append(div);
  }
  const all = el('button', 'diff of everything');
  all.addEventListener('click', () => showDiff(name, null));
  const commit = el('button', 'commit', 'grant');
  commit.addEventListener('click', async () => {
    if (!confirm(`Apply the changes of ${name} to the workspace?`)) return;
    try { box.append(el('pre', await api('/api/commit', { name }))); } catch (e) { box.append(el('p', e.message, 'result error')); }
    overlays();
  });
  const discard = el('button', 'discard', 'danger');
  discard.addEventListener('click', async () => {
    if (!confirm(`Drop every change of ${name}?`)) return;
    try { box.append(el('pre', await api('/api/discard', { name }))); } catch (e) { box.append(el('p', e.message, 'result error')); }
    overlays();
  });
  box.append(el('div'), all, commit, discard);
}

async function overlays() {
  let text;
  try {
    text = await api('/api/overlays');
  } catch (e) {
    $('overlays').textContent = e.message;
    return;
  }
  $('overlays').textContent = text.trim() || 'No overlay sandbox.';
  const acts = $('overlay-actions');
  acts.replaceChildren();
  for (const line of text.split('\n').slice(1)) {
    const name = line.split(/\s+/)[0];
    if (!name) continue;
    const b = el('button', `changes of ${name}`);
    b.addEventListener('click', () => changes(name));
    acts.append(b);
  }
}

async function main() {
  try {
    const s = await api('/api/session');
    csrf = s.csrf;
  } catch (e) {
    $('status').textContent = e.message;
    return;
  }
  await refresh();
  overlays();
  stream();
  setInterval(refresh, 3000);
}

main();
