// The live inbox: keeps the list of waiting questions current over server-sent events.
// Model-written strings only ever reach the page through textContent, never as HTML.
'use strict';
(function () {
  const list = document.getElementById('pending');
  const empty = document.getElementById('empty');
  const status = document.getElementById('live-status');
  if (!list || !window.EventSource || !window.fetch) return;
  const base = list.dataset.base;
  // Counts the live events applied; a listing fetched before one of them is stale and must not replace the list.
  let changes = 0;

  function item(request) {
    const li = document.createElement('li');
    li.dataset.id = request.id;
    const link = document.createElement('a');
    link.href = base + 'requests/' + encodeURIComponent(request.id);
    link.textContent = request.questions.map(function (q) { return q.header; }).join(', ');
    const count = document.createElement('span');
    count.className = 'count';
    const n = request.questions.length;
    count.textContent = n + (n === 1 ? ' question' : ' questions');
    li.append(link, ' ', count);
    return li;
  }

  function show(requests) {
    list.replaceChildren.apply(list, requests.map(item));
    empty.hidden = requests.length > 0;
  }

  function add(request) {
    changes += 1;
    if (list.querySelector('li[data-id="' + CSS.escape(request.id) + '"]')) return;
    list.append(item(request));
    empty.hidden = true;
  }

  function remove(id) {
    changes += 1;
    const li = list.querySelector('li[data-id="' + CSS.escape(id) + '"]');
    if (li) li.remove();
    empty.hidden = list.children.length > 0;
  }

  function resync() {
    const seen = changes;
    fetch(list.dataset.api, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (body) { if (changes === seen) show(body.requests); else resync(); })
      .catch(function () { /* the stream's reconnect will try again */ });
  }

  const events = new EventSource(list.dataset.events);
  events.addEventListener('open', function () {
    status.textContent = 'New questions appear here as they are asked.';
    resync();
  });
  events.addEventListener('error', function () {
    status.textContent = 'Lost the connection to the server; trying again…';
  });
  events.addEventListener('requested', function (e) { add(JSON.parse(e.data).request); });
  events.addEventListener('answered', function (e) { remove(JSON.parse(e.data).id); });
  events.addEventListener('withdrawn', function (e) { remove(JSON.parse(e.data).id); });
})();
