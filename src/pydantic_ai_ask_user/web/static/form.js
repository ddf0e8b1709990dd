// Small helps on the answer form; it works without them.
// - Typing in an "Other" box ticks its "Other" choice.
// - In a multi-select question "Other" replaces the options, as in the terminal: choosing it unticks them,
//   and ticking an option unticks "Other" (radio buttons do both by themselves). The server reads a form
//   sent without this help the same way: "Other" with words in its box is the answer.
// - Errors from the server take the focus; otherwise the first choice does.
// - If the question is answered elsewhere (another tab, another person), the agent stops waiting,
//   or the server finishes, the form says so at once and can no longer be sent; what was typed stays.
'use strict';
(function () {
  const form = document.getElementById('answer-form');
  if (!form) return;

  function chooseOther(other) {
    form.querySelectorAll('input[type="checkbox"]').forEach(function (box) {
      if (box.name === other.name && box !== other) box.checked = false;
    });
  }

  form.querySelectorAll('textarea[data-other]').forEach(function (box) {
    const other = document.getElementById(box.dataset.other);
    if (!other) return;
    box.addEventListener('input', function () {
      if (box.value.trim() === '' || other.checked) return;
      other.checked = true;
      if (other.type === 'checkbox') chooseOther(other);
    });
    if (other.type !== 'checkbox') return;
    form.querySelectorAll('input[type="checkbox"]').forEach(function (option) {
      if (option.name !== other.name) return;
      option.addEventListener('change', function () {
        if (!option.checked) return;
        if (option === other) chooseOther(other);
        else other.checked = false;
      });
    });
  });

  // A note's counter follows what is typed: "12 / 2000".
  form.querySelectorAll('textarea[data-counter]').forEach(function (box) {
    const counter = document.getElementById(box.dataset.counter);
    function update() { counter.textContent = box.value.length + ' / ' + box.maxLength; }
    box.addEventListener('input', update);
    update();
  });

  const summary = document.getElementById('error-summary');
  if (summary) {
    summary.focus();
  } else {
    // The recommended option (it has `autofocus`), else the first; focused, never ticked.
    const first = form.querySelector('input[autofocus]') || form.querySelector('input[data-first]');
    if (first) first.focus();
  }
  const live = window.askUserLive;

  if (!window.EventSource) return;
  const id = form.dataset.id;
  const events = new EventSource(form.dataset.events);
  // Once this tab sends the form, the `answered` event that follows is its own answer.
  let sending = false;
  let stopped = false;

  function stop(notice) {
    if (live && notice !== 'finished') live.adjust(-1);
    if (sending || stopped) return;
    stopped = true;
    events.close();
    // Typed text stays readable and copyable; everything that would send the form is switched off.
    form.querySelectorAll('textarea').forEach(function (el) { el.readOnly = true; });
    form.querySelectorAll('input, button').forEach(function (el) { el.disabled = true; });
    const shown = document.getElementById(notice);
    shown.hidden = false;
    shown.setAttribute('tabindex', '-1');
    shown.focus();
  }

  function about(e) { return JSON.parse(e.data).id === id; }

  form.addEventListener('submit', function () {
    sending = true;
    events.close();
  });
  // The tab title's count follows the events: one fewer, one more; it is asked again only when the stream connects.
  events.addEventListener('answered', function (e) { if (about(e)) stop('answered'); else if (live) live.adjust(-1); });
  events.addEventListener('withdrawn', function (e) { if (about(e)) stop('withdrawn'); else if (live) live.adjust(-1); });
  events.addEventListener('finished', function () { stop('finished'); });
  events.addEventListener('requested', function (e) {
    if (!live) return;
    live.arrived(JSON.parse(e.data).request);
    live.adjust(1);
  });
  // Tool calls waiting for approval count in the title too (the stream tells this person only of their own).
  events.addEventListener('approval_requested', function () { if (live) live.adjust(1, 'approval'); });
  events.addEventListener('approval_decided', function () { if (live) live.adjust(-1, 'approval'); });
  events.addEventListener('approval_withdrawn', function () { if (live) live.adjust(-1, 'approval'); });
  // What happened before the stream connected (between the page load and now) is asked once.
  events.addEventListener('open', function () {
    if (!window.fetch) return;
    if (live) live.recount();
    fetch(form.dataset.api, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) {
        if (r.status === 409) stop('answered');
        else if (r.status === 410) stop('withdrawn');
      })
      .catch(function () { /* the events will tell */ });
  });
  window.addEventListener('pagehide', function () { events.close(); });
})();
