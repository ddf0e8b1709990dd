// Small helps on the answer form; it works without them.
// - Typing in an "Other" box ticks its "Other" choice.
// - Errors from the server take the focus; otherwise the first choice does.
// - If the agent stops waiting, the form says so at once and can no longer be sent.
'use strict';
(function () {
  const form = document.getElementById('answer-form');
  if (!form) return;

  form.querySelectorAll('textarea[data-other]').forEach(function (box) {
    box.addEventListener('input', function () {
      const other = document.getElementById(box.dataset.other);
      if (other && box.value.trim() !== '' && !other.checked) other.checked = true;
    });
  });

  const summary = document.getElementById('error-summary');
  if (summary) {
    summary.focus();
  } else {
    const first = form.querySelector('input[data-first]');
    if (first) first.focus();
  }

  if (!window.EventSource) return;
  const id = form.dataset.id;
  const events = new EventSource(form.dataset.events);
  function gone(e) {
    if (JSON.parse(e.data).id !== id) return;
    events.close();
    form.querySelectorAll('input, textarea, button').forEach(function (el) { el.disabled = true; });
    const notice = document.getElementById('withdrawn');
    notice.hidden = false;
    notice.setAttribute('tabindex', '-1');
    notice.focus();
  }
  events.addEventListener('withdrawn', gone);
  window.addEventListener('pagehide', function () { events.close(); });
})();
