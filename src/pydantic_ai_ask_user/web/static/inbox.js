// The live inbox: keeps the list of waiting questions current over server-sent events.
// Model-written strings only ever reach the page through textContent, never as HTML.
// A request's `id` is its key (its run and its tool call), what every URL and event names; never the tool call id.
'use strict';
(function () {
  const list = document.getElementById('pending');
  const empty = document.getElementById('empty');
  const status = document.getElementById('live-status');
  if (!list) return;
  const live = window.askUserLive;
  const texts = live.texts;
  const FINISHED = texts.finished;
  const SHORT_ID = 8;
  // When each question was first seen live, for stores that do not say when it was asked.
  const seenAt = {};

  function ago(at) {
    const seconds = Date.now() / 1000 - at;
    if (seconds < 45) return texts.just_now;
    const minutes = Math.floor(seconds / 60 + 0.5);
    if (minutes < 60) return plural(texts.minutes, minutes);
    const hours = Math.floor(seconds / 3600 + 0.5);
    if (hours < 24) return plural(texts.hours, hours);
    return plural(texts.days, Math.floor(seconds / 86400 + 0.5));
  }

  // [one, other]: the page's language has at most these two forms.
  function plural(forms, count) { return forms[count === 1 ? 0 : 1].replace('{count}', String(count)); }
  function asked(at) { return texts.asked.replace('{when}', ago(at)); }

  function refreshTimes() {
    list.querySelectorAll('time[data-at]').forEach(function (el) {
      el.textContent = asked(parseFloat(el.dataset.at));
    });
  }
  refreshTimes();
  setInterval(refreshTimes, 30000);

  if (list.dataset.finished !== undefined || !window.EventSource || !window.fetch) return;
  const base = list.dataset.base;
  // Counts the live events applied; a listing fetched before one of them is stale and must not replace the list.
  let changes = 0;

  function item(request) {
    const li = document.createElement('li');
    li.dataset.id = request.id;
    const link = document.createElement('a');
    link.href = base + 'requests/' + encodeURIComponent(request.id);
    link.textContent = request.questions.map(function (q) { return q.header; }).join(', ');
    const meta = document.createElement('span');
    meta.className = 'meta';
    const count = document.createElement('span');
    count.className = 'count';
    const n = request.questions.length;
    count.textContent = plural(texts.questions, n);
    meta.append(count);
    const at = typeof request.asked_at === 'number' ? request.asked_at : seenAt[request.id];
    if (at !== undefined) {
      const time = document.createElement('time');
      time.dateTime = new Date(at * 1000).toISOString();
      time.dataset.at = String(at);
      time.textContent = asked(at);
      meta.append(' · ', time);
    }
    if (typeof request.deadline === 'number') {
      const deadline = document.createElement('span');
      deadline.className = 'deadline';
      const left = document.createElement('time');
      left.className = 'time-left';
      left.dateTime = new Date(request.deadline * 1000).toISOString();
      left.dataset.deadline = String(request.deadline);
      deadline.append(texts.time_left + ' ', left);
      meta.append(' · ', deadline);
    }
    const run = document.createElement('span');
    run.className = 'run';
    const runId = document.createElement('span');
    runId.className = 'run-id';
    // As the server draws it (InboxRow.run): the workflow, else the end of the run id, else of the tool call id.
    const name = request.run_id || request.tool_call_id || request.id;
    runId.textContent = request.run || (name.length <= SHORT_ID ? name : '…' + name.slice(-SHORT_ID));
    const context = request.context || {};
    if (typeof context.agent_name === 'string') {
      const agent = document.createElement('span');
      agent.className = 'agent';
      agent.textContent = context.agent_name;
      meta.append(' · ', agent);
    }
    run.append(texts.run + ' ', runId);
    meta.append(' · ', run);
    if (typeof context.title === 'string') {
      const title = document.createElement('span');
      title.className = 'title';
      title.textContent = context.title;
      li.append(title, '\n');
    }
    li.append(link, '\n', meta);
    return li;
  }

  function show(requests) {
    list.replaceChildren.apply(list, requests.map(item));
    empty.hidden = requests.length > 0;
    counted();
  }

  function counted() {
    live.count(list.children.length);
    live.tick();
  }

  function add(request) {
    changes += 1;
    if (seenAt[request.id] === undefined) seenAt[request.id] = Date.now() / 1000;
    if (list.querySelector('li[data-id="' + CSS.escape(request.id) + '"]')) return;
    list.append(item(request));
    empty.hidden = true;
    counted();
  }

  function remove(id) {
    changes += 1;
    const li = list.querySelector('li[data-id="' + CSS.escape(id) + '"]');
    if (li) li.remove();
    empty.hidden = list.children.length > 0;
    counted();
  }

  function resync() {
    const seen = changes;
    fetch(list.dataset.api, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (body) { if (changes === seen) show(body.requests); else resync(); })
      .catch(function (code) {
        if (code === 503) status.textContent = texts.unreachable;
        // otherwise the stream's reconnect will try again
      });
  }

  const events = new EventSource(list.dataset.events);
  let finished = false;
  events.addEventListener('open', function () {
    status.textContent = texts.live;
    resync();
  });
  events.addEventListener('error', function () {
    if (!finished) status.textContent = texts.lost;
  });
  events.addEventListener('finished', function () {
    finished = true;
    events.close();
    status.textContent = FINISHED;
  });
  // A live row first, then the listing, which knows when it was asked and by which run.
  events.addEventListener('requested', function (e) {
    const request = JSON.parse(e.data).request;
    add(request);
    live.arrived(request);
    resync();
  });
  events.addEventListener('answered', function (e) { remove(JSON.parse(e.data).id); });
  events.addEventListener('withdrawn', function (e) { remove(JSON.parse(e.data).id); });
})();
