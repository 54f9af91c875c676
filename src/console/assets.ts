/**
 * The console's only assets, served by the daemon itself (no CDN, nothing fetched from outside,
 * nothing to build): one stylesheet, one small script, one icon. The pages work without the
 * script; it only keeps figures live (server-sent events from /events) and checks a chosen
 * file's size before it is sent. Colours meet WCAG AA contrast (checked by axe in the tests).
 */
import { createHash } from 'node:crypto';
import { segmentsForScript } from './segments.js';

const CSS = `
:root { --fg: #1b1b1b; --muted: #545454; --bg: #ffffff; --panel: #f4f5f7; --line: #d0d4da; --link: #0b57d0;
  --good-bg: #e6f4ea; --good: #0d652d; --bad-bg: #fce8e6; --bad: #a50e0e; --warn-bg: #fef7e0; --warn: #6b4500; --focus: #0b57d0; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, [tabindex]:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; z-index: 10; }
header.top { background: #12263f; color: #fff; padding: .5rem 1rem; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; }
header.top .bar { display: flex; align-items: center; gap: .75rem; }
header.top a { color: #fff; }
.brand { font-weight: 700; text-decoration: none; }
.mode { font-size: .8rem; font-weight: 700; padding: .1rem .5rem; border-radius: 1rem; }
.mode.sandbox { background: #ffd966; color: #1b1b1b; }
.mode.live { background: #b3261e; color: #fff; }
nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem .9rem; }
nav a { text-decoration: none; padding: .2rem 0; display: inline-block; }
nav a[aria-current="page"] { border-bottom: 3px solid #ffd966; }
.count { background: #fff; color: #12263f; border-radius: 1rem; padding: 0 .45rem; font-size: .8rem; font-weight: 700; }
main { padding: 1rem; max-width: 80rem; margin: 0 auto; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
h2, .h3 { font-size: 1.15rem; margin: 1.25rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
footer { border-top: 1px solid var(--line); padding: .75rem 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; color: var(--muted); font-size: .9rem; }
.grid { display: grid; gap: 0 2rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 26rem), 1fr)); }
.grid > section { min-width: 0; }
.muted { color: var(--muted); }
.ok { color: var(--good); }
.mono, code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .9em; word-break: break-all; }
/* An id in a table is read and copied whole: never broken across lines (the table scrolls instead). */
td.id, td .id, td.mono, .nowrap { white-space: nowrap; word-break: normal; overflow-wrap: normal; }
.banner { margin: 0; padding: .6rem 1rem; font-weight: 600; }
.banner.warn, .message { background: var(--warn-bg); color: var(--warn); }
.banner.info, .notice { background: #e8f0fe; color: #0b3d91; }
.banner p, .banner ul { margin: 0; }
.banner ul { padding-left: 1.2rem; }
.banner a { color: inherit; text-decoration: underline; }
.message, .notice { padding: .6rem .8rem; border-radius: .4rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: .5rem 0; }
dl.facts div { display: contents; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
@media (max-width: 36rem) { dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: .4rem; } }
.table { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); border-radius: .4rem; margin: .5rem 0; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
caption { text-align: left; padding: .4rem .6rem; color: var(--muted); }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: var(--panel); white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
/* A note under a figure ("read 3 s ago") may wrap, so a narrow box needs no sideways scroll. */
td.num .note { white-space: normal; display: block; }
td.cells { min-width: 14rem; font-size: .85rem; }
/* A row's reason (pages/batch.ts): whole on a wide screen (the note on its own line); on a phone one
   line cut with an ellipsis in a column of its own width, the whole text one tap away (trial s36 D4). */
details.why > summary { display: block; list-style: none; cursor: default; }
details.why > summary::-webkit-details-marker { display: none; }
details.why .note { display: block; }
@media (max-width: 36rem) {
  details.why > summary { width: min(14rem, 60vw); cursor: pointer; color: var(--fg); }
  details.why:not([open]) > summary { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; text-decoration: underline dotted; }
  details.why:not([open]) .note { display: inline; }
}
table.states td a { display: block; }
form.bulk fieldset { border: 1px solid var(--line); border-radius: .5rem; display: flex; flex-direction: column; gap: .5rem; max-width: 40rem; }
.pick { margin: .25rem 0; }
.cell { display: inline-block; margin-right: .5rem; }
progress { width: 7rem; height: .9rem; vertical-align: middle; }
.badge { display: inline-block; border-radius: 1rem; padding: 0 .5rem; font-size: .8rem; font-weight: 600; background: var(--panel); color: var(--fg); }
.badge.good, .badge.s-completed { background: var(--good-bg); color: var(--good); }
.badge.bad, .badge.s-cancelled, .badge.s-rejected, .badge.s-invalid, .badge.s-review { background: var(--bad-bg); color: var(--bad); }
button, .button { font: inherit; font-weight: 600; border: 1px solid #0b57d0; background: #0b57d0; color: #fff; padding: .45rem .9rem; border-radius: .4rem; cursor: pointer; text-decoration: none; display: inline-block; }
button.primary { font-size: 1.05rem; }
button.danger, .button.danger { background: #b3261e; border-color: #b3261e; color: #fff; }
button:disabled { background: #8a8f98; border-color: #8a8f98; color: #fff; cursor: not-allowed; }
button.link { background: none; border: none; color: var(--link); padding: 0; text-decoration: underline; font-weight: 400; }
form.inline { display: inline; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: .5rem 0 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .9rem; color: var(--muted); }
input, select { font: inherit; padding: .4rem .5rem; border: 1px solid #767676; border-radius: .3rem; max-width: 100%; color: var(--fg); background: #fff; }
form.login, form.upload, form.pause, .resolve form { display: flex; flex-direction: column; gap: .5rem; max-width: 32rem; margin: .5rem 0 1rem; }
label.check { display: flex; gap: .5rem; align-items: center; }
.drop { display: flex; flex-direction: column; gap: .4rem; padding: 1.5rem; border: 2px dashed #767676; border-radius: .6rem; background: var(--panel); cursor: pointer; }
.drop.over { border-color: var(--link); background: #e8f0fe; }
.drop-title { font-weight: 700; font-size: 1.1rem; }
ul.errors, ul.alerts, ul.files, ul.consequences { padding-left: 1.2rem; }
ul.errors li, ul.alerts li, ul.consequences li { margin: .3rem 0; }
ol.review { list-style: none; padding: 0; }
.review-row { border: 1px solid var(--line); border-radius: .5rem; padding: .25rem 1rem .75rem; margin: 0 0 1rem; }
.resolve { display: grid; gap: 0 2rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 18rem), 1fr)); }
.answer { font-size: .85rem; overflow-wrap: anywhere; }
ul.codes { font-size: 1.2rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
/* The pictures (charts.ts, pictures.ts): SVG drawn on the server, sized by the page. */
.pictures { display: grid; gap: 0 2rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 34rem), 1fr)); }
.picture { min-width: 0; border-top: 1px solid var(--line); }
.picture h3 { margin-bottom: .1rem; }
.picture figure { margin: 0; }
.picture figcaption { font-size: .9rem; margin: .25rem 0; }
.question, .switch { margin: 0 0 .25rem; font-size: .9rem; }
svg.chart { display: block; width: 100%; max-width: 100%; height: auto; }
.legend, .seglegend { list-style: none; display: flex; flex-wrap: wrap; gap: .2rem 1rem; padding: 0; margin: .25rem 0; font-size: .85rem; }
.legend li, .seglegend li { display: flex; align-items: center; gap: .35rem; }
details.numbers { margin: .25rem 0; }
details.numbers summary { cursor: pointer; color: var(--link); }
.csvline { margin: .25rem 0 .75rem; font-size: .9rem; }
.multiples { display: grid; grid-template-columns: 1fr; gap: 0; }
.h4 { font-size: .95rem; margin: .6rem 0 .2rem; }
ul.classes { list-style: none; padding: 0; margin: .25rem 0; }
ul.classes li { display: grid; grid-template-columns: minmax(8rem, 24rem) 1fr auto auto; gap: .5rem; align-items: center; font-size: .9rem; }
.from { display: inline-block; font-size: .75rem; font-weight: 600; padding: 0 .35rem; border-radius: .2rem; border: 1px solid currentColor; margin-right: .25rem; }
.from-supplier { color: #a50e0e; }
.from-topup { color: #0b3d91; }
.from-none { color: #545454; }
svg.hbar { width: 100%; height: .6rem; }
svg.segbar { display: block; width: 100%; height: 1.1rem; border: 1px solid #767676; border-radius: .2rem; }
svg.segbar.small { display: inline-block; width: 7rem; height: .9rem; vertical-align: middle; }
.segwrap { margin: .5rem 0; }
`;

const JS = `
(function () {
  'use strict';
  function fmtEta(s) {
    if (s === null || s === undefined) return '…';
    if (s < 60) return Math.max(0, Math.round(s)) + ' s';
    var m = Math.round(s / 60);
    if (m < 60) return m + ' min';
    return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }
  function usd(n) { return (Math.round(n * 100) / 100).toFixed(2) + ' USD'; }
  function set(root, field, text) {
    var els = root.querySelectorAll('[data-f="' + field + '"]');
    for (var i = 0; i < els.length; i++) if (els[i].textContent !== text) els[i].textContent = text;
  }
  // The segments of a batch's progress and the counts each sums (segments.ts, written in here).
  var SEGMENTS = ${segmentsForScript()};
  var STATES = [];
  for (var si = 0; si < SEGMENTS.length; si++) STATES = STATES.concat(SEGMENTS[si].parts);
  function segN(c, s) { var n = 0; for (var i = 0; i < s.parts.length; i++) n += c[s.parts[i]]; return n; }
  function segOf(key) { for (var i = 0; i < SEGMENTS.length; i++) if (SEGMENTS[i].key === key) return SEGMENTS[i]; return null; }
  function key(b) {
    var k = [b.done, b.sent];
    for (var i = 0; i < STATES.length; i++) k.push(b.counts[STATES[i]]);
    return k.join(',');
  }
  // The row list of a running batch, read again when the figures moved (at most every 2 s).
  var lists = {};
  function followRows(b) {
    var secs = document.querySelectorAll('[data-rows-batch]');
    for (var i = 0; i < secs.length; i++) {
      var sec = secs[i];
      var url = sec.getAttribute('data-rows');
      if (sec.getAttribute('data-rows-batch') !== b.id || !url) continue;
      var want = key(b);
      var st = lists[b.id] || (lists[b.id] = { busy: false, at: 0 });
      if (sec.getAttribute('data-rows-key') === want || st.busy || performance.now() - st.at < 2000) continue;
      st.busy = true;
      st.at = performance.now();
      (function (sec, want, st) {
        fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } })
          .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
          .then(function (t) {
            var body = sec.querySelector('[data-rows-body]');
            if (body) body.innerHTML = t;
            sec.setAttribute('data-rows-key', want);
          })
          .catch(function () { /* the next payload tries again */ })
          .then(function () { st.busy = false; });
      })(sec, want, st);
    }
  }
  // The segmented progress bars (charts.ts segmentBar): the same segments as the server draws.
  function segs(root, b) {
    var c = b.counts;
    var svgs = root.querySelectorAll('svg[data-segbar]');
    var total = Math.max(b.rows, 1);
    for (var i = 0; i < svgs.length; i++) {
      var at = 0;
      var said = [];
      for (var j = 0; j < SEGMENTS.length; j++) {
        var n = segN(c, SEGMENTS[j]);
        var r = svgs[i].querySelector('rect[data-seg="' + SEGMENTS[j].key + '"]');
        if (r) { r.setAttribute('x', (at / total * 100).toFixed(2)); r.setAttribute('width', (n / total * 100).toFixed(2)); }
        at += n;
        if (n > 0) said.push(SEGMENTS[j].label + ' ' + n);
      }
      svgs[i].setAttribute('aria-label', (said.join(', ') || 'no rows') + ' of ' + b.rows + ' rows');
    }
    for (var k = 0; k < SEGMENTS.length; k++) set(root, 'seg-' + SEGMENTS[k].key, String(segN(c, SEGMENTS[k])));
  }
  // The Overview's pictures: read again (the whole block) when rows moved, at most every 10 s,
  // and every minute anyway (the rate picture moves with the clock). Open "Numbers" stay open.
  var pics = document.querySelector('[data-pictures]');
  var picsAt = performance.now();
  var picsKey = null;
  var picsBusy = false;
  function followPictures(p) {
    if (!pics || picsBusy) return;
    var k = [];
    for (var i = 0; i < p.batches.length; i++) k.push(p.batches[i].id + ':' + key(p.batches[i]));
    k = k.join('|');
    var age = performance.now() - picsAt;
    if (picsKey === null) picsKey = k;
    if (!((k !== picsKey && age >= 10000) || age >= 60000)) return;
    picsBusy = true;
    picsAt = performance.now();
    fetch(pics.getAttribute('data-pictures'), { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then(function (t) {
        var open = {};
        var ds = pics.querySelectorAll('details[open] summary');
        for (var i = 0; i < ds.length; i++) open[ds[i].textContent] = true;
        pics.innerHTML = t;
        var all = pics.querySelectorAll('details summary');
        for (var j = 0; j < all.length; j++) if (open[all[j].textContent]) all[j].parentNode.open = true;
        picsKey = k;
      })
      .catch(function () { /* the next payload tries again */ })
      .then(function () { picsBusy = false; });
  }
  function update(p) {
    var seen = {};
    for (var i = 0; i < p.batches.length; i++) {
      var b = p.batches[i];
      seen[b.id] = true;
      var roots = document.querySelectorAll('[data-batch]');
      var found = false;
      for (var j = 0; j < roots.length; j++) {
        var root = roots[j];
        if (root.getAttribute('data-batch') !== b.id) continue;
        found = true;
        set(root, 'state', b.state + (b.cancelRequested && !b.finished ? ' (cancelling)' : ''));
        set(root, 'done', b.done + ' / ' + b.rows);
        set(root, 'sent', String(b.sent));
        set(root, 'completed', String(b.counts.completed));
        set(root, 'failed', String(segN(b.counts, segOf('failed'))));
        set(root, 'spent', usd(b.spentUsd));
        set(root, 'eta', b.finished ? '\\u2014' : fmtEta(b.etaSec));
        set(root, 'why', b.why || (root.tagName === 'TR' ? '' : '\\u2014'));
        for (var q = 0; q < STATES.length; q++) set(root, 'c-' + STATES[q], String(b.counts[STATES[q]]));
        var bars = root.querySelectorAll('[data-f="bar"]');
        for (var k = 0; k < bars.length; k++) { bars[k].max = Math.max(b.rows, 1); bars[k].value = b.done; bars[k].textContent = String(b.done); }
        segs(root, b);
        if (b.finished && root.getAttribute('data-follow') === b.id) { root.setAttribute('data-follow', ''); window.location.reload(); }
      }
      followRows(b);
      if (!found && !b.finished && document.querySelector('[data-live-list]')) {
        var note = document.querySelector('[data-new-batches]');
        if (note) note.hidden = false;
      }
    }
    followPictures(p);
    // Each account's queue, the figures topup status shows (ops/account-views.ts accountQueues).
    var qs = p.accounts || [];
    for (var a = 0; a < qs.length; a++) {
      var acc = qs[a];
      var rowsOf = document.querySelectorAll('tr[data-account]');
      for (var ra = 0; ra < rowsOf.length; ra++) if (rowsOf[ra].getAttribute('data-account') === acc.account) set(rowsOf[ra], 'waiting', String(acc.rowsWaiting));
      var money = document.querySelectorAll('[data-money-account]');
      for (var ma = 0; ma < money.length; ma++) if (money[ma].getAttribute('data-money-account') === acc.account) { set(money[ma], 'reserved', usd(acc.reservedUsd)); set(money[ma], 'waiting-balance', acc.waitingForBalanceUsd > 0 ? 'waiting for balance: ' + usd(acc.waitingForBalanceUsd) : ''); }
    }
    // Each account's balance and what is available for new files (live.ts money), and their sums
    // once every account is read (as the server renders the total: a sum with a gap is not shown).
    var ms = p.money || [];
    var allRead = ms.length > 0;
    var sumBalance = 0, sumAvailable = 0;
    for (var mi = 0; mi < ms.length; mi++) {
      var mo = ms[mi];
      if (mo.balanceUsd === null || mo.availableUsd === null) { allRead = false; continue; }
      sumBalance += mo.balanceUsd; sumAvailable += mo.availableUsd;
      var mrows = document.querySelectorAll('[data-money-account]');
      for (var mr = 0; mr < mrows.length; mr++) if (mrows[mr].getAttribute('data-money-account') === mo.account) { set(mrows[mr], 'balance-usd', usd(mo.balanceUsd)); set(mrows[mr], 'available', usd(mo.availableUsd)); }
    }
    var mtotal = document.querySelector('tr[data-money-total]');
    if (mtotal && allRead) { set(mtotal, 'balance-usd', usd(sumBalance)); set(mtotal, 'available', usd(sumAvailable)); }
    var counts = document.querySelectorAll('[data-review-count]');
    for (var c = 0; c < counts.length; c++) counts[c].textContent = String(p.reviewRows);
  }
  if (document.body.getAttribute('data-live') === '1' && window.EventSource) {
    var es = new EventSource('/events');
    es.addEventListener('progress', function (e) { try { update(JSON.parse(e.data)); } catch (err) { /* a bad payload waits for the next */ } });
  }
  // The review queue: select every row shown, and say how many are selected.
  var all = document.querySelector('[data-select-all]');
  var picks = document.querySelectorAll('input[data-pick]');
  function picked() {
    var n = 0;
    for (var i = 0; i < picks.length; i++) if (picks[i].checked) n++;
    var out = document.querySelector('[data-picked]');
    if (out) out.textContent = n > 0 ? n + ' selected' : '';
    if (all) all.checked = n > 0 && n === picks.length;
  }
  if (all) {
    var wrap = document.querySelector('[data-select-all-wrap]');
    if (wrap) wrap.hidden = false;
    all.addEventListener('change', function () {
      for (var i = 0; i < picks.length; i++) picks[i].checked = all.checked;
      picked();
    });
  }
  for (var pi = 0; pi < picks.length; pi++) picks[pi].addEventListener('change', picked);
  var input = document.querySelector('input[type=file][data-max]');
  if (input) {
    var note = document.querySelector('[data-file-note]');
    var drop = input.closest('.drop');
    var max = Number(input.getAttribute('data-max'));
    input.addEventListener('change', function () {
      var f = input.files && input.files[0];
      if (!f || !note) return;
      if (f.size > max) {
        note.textContent = f.name + ' is ' + (f.size / 1048576).toFixed(1) + ' MB, more than the ' + Math.round(max / 1048576) + ' MB the console accepts: split it, or drop it into the inbox folder.';
        input.value = '';
      } else {
        note.textContent = 'Chosen: ' + f.name + ' (' + Math.ceil(f.size / 1024) + ' KB). Press "Check file".';
      }
    });
    if (drop) {
      ['dragenter', 'dragover'].forEach(function (t) { drop.addEventListener(t, function () { drop.classList.add('over'); }); });
      ['dragleave', 'drop'].forEach(function (t) { drop.addEventListener(t, function () { drop.classList.remove('over'); }); });
    }
  }
})();
`;

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#12263f"/><path d="M9 17l5 5 9-11" stroke="#ffd966" stroke-width="4" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>`;

export interface Asset {
  body: string;
  type: string;
  etag: string;
}

function asset(body: string, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` };
}

export const ASSETS: Record<string, Asset> = {
  '/assets/console.css': asset(CSS, 'text/css; charset=utf-8'),
  '/assets/console.js': asset(JS, 'text/javascript; charset=utf-8'),
  '/favicon.svg': asset(ICON, 'image/svg+xml'),
};
