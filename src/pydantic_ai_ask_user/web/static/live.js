// What every live page shares: the tab title counts the waiting questions and approvals, the time left counts down,
// and, once the person allows it ("Notify me"), a browser notification says a new question is waiting.
// The texts come from the page (a JSON data block in its language); model-written strings only ever
// reach the page through textContent or a notification's plain-text body, never as HTML.
'use strict';
(function () {
  const data = document.getElementById('ask-user-live');
  if (!data) return;
  const texts = JSON.parse(data.textContent);
  const baseTitle = document.title.replace(/^\(\d+\) /, '');
  const drawn = /^\((\d+)\) /.exec(document.title);

  // The title counts what waits for the person: questions and tool calls waiting for approval, kept apart so that
  // each list (or each kind of event) sets its own count; the page drew their sum.
  const counted = { question: drawn ? parseInt(drawn[1], 10) : 0, approval: 0 };
  function count(n, kind) {
    counted[kind === 'approval' ? 'approval' : 'question'] = Math.max(0, n);
    const total = counted.question + counted.approval;
    document.title = (total > 0 ? '(' + total + ') ' : '') + baseTitle;
  }
  // A change the page heard about: one more or one fewer waiting, without asking the server.
  let changes = 0;
  function adjust(delta, kind) {
    const which = kind === 'approval' ? 'approval' : 'question';
    changes += 1;
    count(counted[which] + delta, which);
  }

  function clock(seconds) {
    const total = Math.max(0, Math.floor(seconds));
    const h = Math.floor(total / 3600);
    const m = Math.floor((total % 3600) / 60);
    const s = total % 60;
    const ss = (s < 10 ? '0' : '') + s;
    if (h) return h + ':' + (m < 10 ? '0' : '') + m + ':' + ss;
    return m + ':' + ss;
  }

  function tick() {
    const now = Date.now() / 1000;
    document.querySelectorAll('time.time-left[data-deadline]').forEach(function (el) {
      const left = parseFloat(el.dataset.deadline) - now;
      el.textContent = left > 0 ? clock(left) : texts.time_up;
      el.classList.toggle('urgent', left < 60);
    });
  }
  tick();
  setInterval(tick, 1000);

  const button = document.getElementById('notify-me');
  const state = document.getElementById('notify-state');
  const canNotify = 'Notification' in window;

  function showPermission() {
    if (!canNotify || !button) return;
    const permission = Notification.permission;
    button.hidden = permission !== 'default';
    state.hidden = permission === 'default';
    state.textContent = permission === 'granted' ? texts.notify_on : texts.notify_blocked;
  }
  showPermission();
  if (canNotify && button) {
    button.addEventListener('click', function () {
      const asked = Notification.requestPermission(showPermission);
      if (asked && asked.then) asked.then(showPermission);
    });
  }

  // A new question: a notification, when allowed and the person is not looking at this tab.
  function arrived(request) {
    if (!canNotify || Notification.permission !== 'granted') return;
    if (document.visibilityState === 'visible' && document.hasFocus()) return;
    const headers = request.questions.map(function (q) { return q.header; }).join(', ');
    const shown = new Notification(texts.notify_title, { body: headers, tag: 'ask-user-' + request.id });
    shown.onclick = function () {
      window.focus();
      window.location.href = texts.base + 'requests/' + encodeURIComponent(request.id);
      shown.close();
    };
  }

  // The waiting counts, asked of the JSON API (when the event stream connects): a page of one of each kind, and its
  // total. Both answers land together, so the title never shows one kind's new count beside the other's old one; an
  // event heard while they were on their way may or may not be in them, so the counts are asked again then.
  let asking = 0;
  function total(url) {
    return fetch(url + '?limit=1', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (body) { return body.total; });
  }
  function recount() {
    if (!window.fetch) return;
    const mine = ++asking;
    const seen = changes;
    Promise.all([total(texts.api), total(texts.approvals_api)])
      .then(function (totals) {
        if (mine !== asking) return;
        if (changes !== seen) { recount(); return; }
        counted.approval = totals[1];
        count(totals[0], 'question');
      })
      .catch(function () { /* the next connection asks again */ });
  }

  window.askUserLive = {
    texts: texts, count: count, adjust: adjust, recount: recount, arrived: arrived, clock: clock, tick: tick,
  };
})();
