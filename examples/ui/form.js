// The question form both example pages draw: one fieldset per question, options as radio buttons
// (checkboxes when multi_select), an "Other" box for the person's own words, Answer and Decline.
// Everything the model wrote is set with textContent, never as HTML.
export function askForm(container, questions, onAnswer) {
  container.replaceChildren();
  const form = document.createElement('form');
  questions.forEach((question, index) => {
    const fieldset = document.createElement('fieldset');
    const legend = document.createElement('legend');
    legend.textContent = `${question.header}: ${question.question}`;
    fieldset.append(legend);
    for (const option of question.options) {
      const label = document.createElement('label');
      const input = document.createElement('input');
      input.type = question.multi_select ? 'checkbox' : 'radio';
      input.name = `q${index}`;
      input.value = option.label;
      label.append(input, ` ${option.label}`);
      if (option.description) label.title = option.description;
      fieldset.append(label, document.createElement('br'));
    }
    const other = document.createElement('input');
    other.name = `other${index}`;
    other.placeholder = 'Other (your own words)';
    other.setAttribute('aria-label', `Other answer to ${question.header}`);
    fieldset.append(other);
    form.append(fieldset);
  });
  const answer = document.createElement('button');
  answer.textContent = 'Answer';
  const decline = document.createElement('button');
  decline.textContent = 'Decline';
  decline.type = 'button';
  form.append(answer, ' ', decline);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const answers = questions.map((question, index) => {
      const own = form.elements[`other${index}`].value.trim();
      if (own) return { header: question.header, custom_answer: own };
      const picked = [...form.querySelectorAll(`input[name="q${index}"]:checked`)].map((input) => input.value);
      return { header: question.header, selected: picked };
    });
    container.replaceChildren();
    onAnswer({ answers, cancelled: false });
  });
  decline.addEventListener('click', () => {
    container.replaceChildren();
    onAnswer({ answers: [], cancelled: true });
  });
  container.append(form);
}

// The data lines of a server-sent event stream, parsed; `[DONE]` (the Vercel stream's end) left out.
export function sseData(text) {
  return text.split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .filter((data) => data && data !== '[DONE]')
    .map((data) => JSON.parse(data));
}
