// The live inbox: the first page is drawn by the server; the following pages load as the person scrolls (or clicks
// "More questions"), and the server-sent events keep the loaded rows and the count current, one change at a time:
// the list is never fetched whole. When the stream (re)connects, the first page is fetched again, as it may have
// missed events.
// Model-written strings only ever reach the page through textContent, never as HTML.
// A request's `id` is its key (its run and its tool call), what every URL and event names; never the tool call id.
'use strict';
(function () {
  const list = document.getElementById('pending');
  const empty = document.getElementById('empty');
  const status = document.getElementById('live-status');
  const totalLine = document.getElementById('total');
  const moreWrap = document.getElementById('more-wrap');
  const moreLink = document.getElementById('more');
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
  // As the server's `printable` draws what the model or the app wrote: every character that may not be drawn
  // (controls, format characters such as bidirectional overrides and zero-width spaces, surrogates, line and
  // paragraph separators) becomes U+FFFD, so that a row drawn live reads as the same row on a reloaded page.
  const undrawable = /(?!\n)[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
  function printable(text) { return String(text).replace(undrawable, '\uFFFD'); }
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
  const limit = parseInt(list.dataset.limit, 10) || 50;
  const NO_DEADLINE = 1e12; // where a question without a deadline sorts, as the server sorts it
  // The cursor of the next page not loaded yet; null once every page is loaded.
  let cursor = list.dataset.cursor || null;
  // The active search and filter, as the end of a query string (`&agent=...`), repeated in every page fetched.
  const search = list.dataset.search || '';
  const filtered = list.dataset.filtered !== undefined;
  let total = parseInt(list.dataset.total, 10) || 0;
  // Where each loaded row sorts: [deadline, asked at, id], as the server orders the pages.
  const order = new Map();
  list.querySelectorAll('li[data-id]').forEach(function (li) {
    const deadline = li.querySelector('time.time-left');
    const at = li.querySelector('time[data-at]');
    order.set(li.dataset.id, [
      deadline ? parseFloat(deadline.dataset.deadline) : NO_DEADLINE,
      at ? parseFloat(at.dataset.at) : 0,
      li.dataset.id,
    ]);
  });
  // Counts the live events applied; a page fetched before one of them is stale and must not replace the list.
  let changes = 0;
  let loading = false;

  function before(a, b) {
    for (let i = 0; i < 3; i++) {
      if (a[i] < b[i]) return true;
      if (a[i] > b[i]) return false;
    }
    return false;
  }

  function item(request) {
    const li = document.createElement('li');
    li.dataset.id = request.id;
    const link = document.createElement('a');
    link.href = base + 'requests/' + encodeURIComponent(request.id);
    // The headers, then the first question itself (as the server draws the row): the link says what is asked.
    const headers = document.createElement('span');
    headers.className = 'headers';
    headers.textContent = printable(request.questions.map(function (q) { return q.header; }).join(', '));
    const first = document.createElement('span');
    first.className = 'question';
    first.textContent = printable(request.questions[0].question);
    link.append(headers, ' ', first);
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
      agent.textContent = printable(context.agent_name);
      meta.append(' · ', agent);
    }
    run.append(texts.run + ' ', runId);
    meta.append(' · ', run);
    if (typeof context.title === 'string') {
      const title = document.createElement('span');
      title.className = 'title';
      title.textContent = printable(context.title);
      li.append(title, '\n');
    }
    li.append(link, '\n', meta);
    order.set(request.id, [
      typeof request.deadline === 'number' ? request.deadline : NO_DEADLINE,
      at === undefined ? 0 : at,
      request.id,
    ]);
    return li;
  }

  function row(id) { return list.querySelector('li[data-id="' + CSS.escape(id) + '"]'); }

  // Rows of a page, after those loaded: one fragment, however many (never one call argument per row).
  function append(requests) {
    const fragment = document.createDocumentFragment();
    requests.forEach(function (request) { if (!order.has(request.id)) fragment.append(item(request)); });
    list.append(fragment);
  }

  function counted() {
    empty.hidden = total > 0 || list.children.length > 0;
    totalLine.hidden = total === 0;
    totalLine.textContent = plural(texts.waiting, total);
    moreWrap.hidden = cursor === null;
    if (cursor !== null) moreLink.href = base + '?cursor=' + encodeURIComponent(cursor) + '&limit=' + limit + search;
    live.count(total);
    live.tick();
  }

  function page(after) {
    let url = list.dataset.api + '?limit=' + limit + search;
    if (after !== null) url += '&cursor=' + encodeURIComponent(after);
    return fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); });
  }

  function failed(code) {
    if (code === 503) status.textContent = texts.unreachable;
    // otherwise the stream's reconnect, or the next scroll, tries again
  }

  // Bumped when the first page is fetched again: a next page asked for before then is stale and dropped.
  let generation = 0;
  // True while the first page is being fetched again.
  let resyncing = false;

  // While the end of the list is on screen (a tall window, a short page), the next page follows.
  function fill() {
    if (cursor !== null && moreWrap.getBoundingClientRect().top < window.innerHeight + 400) more();
  }

  // The next page, after the rows loaded: its rows are appended, and the total is the server's.
  // While the first page is fetched again, no next page is asked for: its cursor would be the old list's. A next page
  // already asked for is dropped when it comes, and whichever of the two ends last calls fill(), so that a window
  // whose end stays on screen (no scroll, no new intersection) still gets the pages after it.
  function more() {
    if (loading || resyncing || cursor === null) return;
    loading = true;
    const mine = generation;
    moreLink.textContent = texts.loading;
    page(cursor)
      .then(function (body) {
        if (mine !== generation) return;
        append(body.requests);
        cursor = body.next_cursor;
        total = body.total;
        counted();
      })
      .catch(failed)
      .then(function () {
        loading = false;
        moreLink.textContent = texts.more;
        fill();
      });
  }

  // After (re)connecting: the first page again, since events may have been missed; the other pages load on scroll.
  function resync() {
    const seen = changes;
    generation += 1;
    resyncing = true;
    page(null)
      .then(function (body) {
        if (changes !== seen) { resync(); return; }
        order.clear();
        list.replaceChildren();
        append(body.requests);
        cursor = body.next_cursor;
        total = body.total;
        counted();
        resyncing = false;
        fill();
      })
      .catch(function (error) { resyncing = false; failed(error); });
  }

  function add(request) {
    // With a search or filter active the page adds no arriving row (it could not tell whether it matches: the
    // server's search is the one rule); removals still apply, and a reload searches again.
    if (filtered) return;
    changes += 1;
    if (seenAt[request.id] === undefined) seenAt[request.id] = Date.now() / 1000;
    if (order.has(request.id)) return;
    total += 1;
    const li = item(request);
    const key = order.get(request.id);
    // Shown only where it sorts among the loaded rows; past the last of them, a later page brings it.
    let next = null;
    for (const other of list.children) {
      if (before(key, order.get(other.dataset.id))) { next = other; break; }
    }
    if (next !== null) list.insertBefore(li, next);
    else if (cursor === null) list.append(li);
    else order.delete(request.id);
    counted();
  }

  function remove(id) {
    changes += 1;
    total = Math.max(0, total - 1);
    const li = row(id);
    if (li) li.remove();
    order.delete(id);
    counted();
  }

  if (moreLink) {
    moreLink.addEventListener('click', function (e) { e.preventDefault(); more(); });
    if (window.IntersectionObserver) {
      new IntersectionObserver(function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) more();
      }, { rootMargin: '400px' }).observe(moreWrap);
    }
  }

  // The tool calls waiting for approval: a list of their own above the questions, the oldest first, paged and kept
  // current the same way (events approval_requested, approval_decided, approval_withdrawn; resynced on reconnecting).
  const approvals = (function () {
    const box = document.getElementById('approvals');
    const wrap = document.getElementById('approvals-wrap');
    const moreBox = document.getElementById('more-approvals-wrap');
    const moreApprovals = document.getElementById('more-approvals');
    if (!box) return { add: function () {}, remove: function () {}, resync: function () {} };
    let after = box.dataset.cursor || null;
    // How many wait for this person in all (the tab title counts them beside the questions): the server's total on
    // each resync, one more or one fewer with each event in between.
    let waiting = parseInt(box.dataset.total, 10) || 0;
    let busy = false;
    let changed = 0;
    let round = 0;
    const at = new Map(); // each loaded row's place: [opened at, id]
    box.querySelectorAll('li[data-id]').forEach(function (li) {
      at.set(li.dataset.id, [parseFloat(li.dataset.at) || 0, li.dataset.id]);
    });

    function draw(approval) {
      const li = document.createElement('li');
      li.dataset.id = approval.id;
      li.dataset.at = String(approval.opened_at);
      const context = approval.context || {};
      if (typeof context.title === 'string') {
        const title = document.createElement('span');
        title.className = 'title';
        title.textContent = printable(context.title);
        li.append(title, '\n');
      }
      const link = document.createElement('a');
      link.href = base + 'approvals/' + encodeURIComponent(approval.id);
      const tool = document.createElement('code');
      tool.textContent = printable(approval.tool_name);
      link.append(tool);
      const args = document.createElement('span');
      args.className = 'args';
      const line = JSON.stringify(approval.args);
      args.textContent = printable(line.length <= 200 ? line : line.slice(0, 199) + '…');
      const meta = document.createElement('span');
      meta.className = 'meta';
      meta.append(texts.approval);
      if (typeof context.agent_name === 'string') {
        const agent = document.createElement('span');
        agent.className = 'agent';
        agent.textContent = printable(context.agent_name);
        meta.append(' · ', agent);
      }
      if (typeof approval.run_id === 'string') {
        const run = document.createElement('span');
        run.className = 'run';
        const runId = document.createElement('span');
        runId.className = 'run-id';
        // Shortened as the server draws it (the end of the run id); the whole id is its title.
        const whole = printable(approval.run_id);
        runId.title = whole;
        runId.textContent = whole.length <= SHORT_ID ? whole : '…' + whole.slice(-SHORT_ID);
        run.append(texts.run + ' ', runId);
        meta.append(' · ', run);
      }
      li.append(link, ' ', args, '\n', meta);
      at.set(approval.id, [approval.opened_at, approval.id]);
      return li;
    }

    function shown() {
      live.count(waiting, 'approval');
      wrap.hidden = box.children.length === 0;
      moreBox.hidden = after === null;
      if (after !== null) {
        moreApprovals.href = base + '?approval_cursor=' + encodeURIComponent(after) + '&limit=' + limit + search;
      }
    }

    function fetchPage(cursorAfter) {
      let url = texts.approvals_api + '?limit=' + limit + search;
      if (cursorAfter !== null) url += '&cursor=' + encodeURIComponent(cursorAfter);
      return fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
        .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); });
    }

    function appendAll(items) {
      const fragment = document.createDocumentFragment();
      items.forEach(function (a) { if (!at.has(a.id)) fragment.append(draw(a)); });
      box.append(fragment);
    }

    function more() {
      if (busy || after === null) return;
      busy = true;
      const mine = round;
      fetchPage(after)
        .then(function (body) {
          if (mine !== round) return;
          appendAll(body.approvals);
          after = body.next_cursor;
          shown();
        })
        .catch(failed)
        .then(function () { busy = false; });
    }

    function resyncApprovals() {
      const seen = changed;
      round += 1;
      fetchPage(null)
        .then(function (body) {
          if (changed !== seen) { resyncApprovals(); return; }
          at.clear();
          box.replaceChildren();
          appendAll(body.approvals);
          after = body.next_cursor;
          waiting = body.total;
          shown();
        })
        .catch(failed);
    }

    function addApproval(approval) {
      if (filtered) return;
      changed += 1;
      if (at.has(approval.id)) return;
      waiting += 1;
      const li = draw(approval);
      const key = at.get(approval.id);
      let next = null;
      for (const other of box.children) {
        if (before(key.concat([0]), at.get(other.dataset.id).concat([0]))) { next = other; break; }
      }
      if (next !== null) box.insertBefore(li, next);
      else if (after === null) box.append(li);
      else at.delete(approval.id); // past the loaded rows: a later page brings it
      shown();
    }

    function removeApproval(id) {
      changed += 1;
      waiting = Math.max(0, waiting - 1);
      const li = box.querySelector('li[data-id="' + CSS.escape(id) + '"]');
      if (li) li.remove();
      at.delete(id);
      shown();
    }

    if (moreApprovals) moreApprovals.addEventListener('click', function (e) { e.preventDefault(); more(); });
    return { add: addApproval, remove: removeApproval, resync: resyncApprovals };
  })();

  const events = new EventSource(list.dataset.events);
  let finished = false;
  events.addEventListener('open', function () {
    // A filtered list is not kept current with arriving rows (the page says so above it): no promise that they appear.
    status.textContent = filtered ? '' : texts.live;
    resync();
    approvals.resync();
  });
  events.addEventListener('error', function () {
    if (!finished) status.textContent = texts.lost;
  });
  events.addEventListener('finished', function () {
    finished = true;
    events.close();
    status.textContent = FINISHED;
  });
  events.addEventListener('requested', function (e) {
    const request = JSON.parse(e.data).request;
    add(request);
    live.arrived(request);
  });
  events.addEventListener('answered', function (e) { remove(JSON.parse(e.data).id); });
  events.addEventListener('withdrawn', function (e) { remove(JSON.parse(e.data).id); });
  events.addEventListener('approval_requested', function (e) { approvals.add(JSON.parse(e.data).approval); });
  events.addEventListener('approval_decided', function (e) { approvals.remove(JSON.parse(e.data).id); });
  events.addEventListener('approval_withdrawn', function (e) { approvals.remove(JSON.parse(e.data).id); });
})();
