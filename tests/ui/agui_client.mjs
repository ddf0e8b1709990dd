// Drives an AG-UI endpoint with the real `@ag-ui/client` HttpAgent, as a page built on it would.
// Usage: node agui_client.mjs URL MODE ANSWER_JSON
//   MODE resume:       answer the question interrupt with `resume[]` (status "resolved", payload ANSWER_JSON)
//   MODE decline:      answer it with status "cancelled"
//   MODE tool-message: send ANSWER_JSON as a plain ToolMessage for the call instead (the CopilotKit pattern)
//   MODE entries:      resume with the entries ANSWER_JSON lists as they are, "{interrupt}" and "{call}" in an
//                      interruptId replaced by the question interrupt's id and tool call id. The client's own
//                      check that every pending interrupt is answered is switched off: a hand-written or
//                      hostile client does not make it, so the server must not rely on it.
//   MODE twice:        answer the interrupt with ANSWER_JSON[0], then the next run's interrupt with ANSWER_JSON[1]
// Prints one JSON line: what the first run ended with and what the second run did (and, for twice, the third).
import { HttpAgent } from '@ag-ui/client';

const [url, mode, answerJson] = process.argv.slice(2);
const answer = JSON.parse(answerJson);

function recorder() {
  const seen = { custom: [], outcome: null, error: null, failed: null };
  const subscriber = {
    onCustomEvent({ event }) { seen.custom.push({ name: event.name, value: event.value }); },
    onRunFinishedEvent({ event }) { seen.outcome = event.outcome ?? null; },
    onRunErrorEvent({ event }) { seen.error = event.message; },
    onRunFailed({ error }) { seen.failed = String(error && error.message || error); return { stopPropagation: true }; },
  };
  return { seen, subscriber };
}

async function run(agent, parameters) {
  const { seen, subscriber } = recorder();
  try {
    await agent.runAgent(parameters, subscriber);
  } catch (error) {
    seen.failed = String(error && error.message || error);
  }
  return seen;
}

function lastAssistantText(messages) {
  const texts = messages.filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content);
  return texts.length ? texts[texts.length - 1].content : null;
}

const agent = new HttpAgent({ url, threadId: `thread-${Date.now()}` });
agent.addMessage({ id: 'user-1', role: 'user', content: 'Deploy the service.' });
const first = await run(agent, {});
const interrupt = first.outcome && first.outcome.type === 'interrupt' ? first.outcome.interrupts[0] : null;
let second = null;
let third = null;
let nextInterrupt = null;
let text = null;
if (interrupt) {
  if (mode === 'entries') {
    const fill = (id) => id.replaceAll('{interrupt}', interrupt.id).replaceAll('{call}', interrupt.toolCallId);
    agent.pendingInterrupts = [];
    second = await run(agent, { resume: answer.map((entry) => ({ ...entry, interruptId: fill(entry.interruptId) })) });
    text = lastAssistantText(agent.messages);
  } else if (mode === 'twice') {
    second = await run(agent, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: answer[0] }] });
    nextInterrupt = second.outcome && second.outcome.type === 'interrupt' ? second.outcome.interrupts[0] : null;
    if (nextInterrupt) {
      third = await run(agent, { resume: [{ interruptId: nextInterrupt.id, status: 'resolved', payload: answer[1] }] });
    }
    text = lastAssistantText(agent.messages);
  } else if (mode === 'tool-message') {
    const retry = new HttpAgent({ url, threadId: agent.threadId, initialMessages: [
      ...agent.messages,
      { id: 'tool-1', role: 'tool', toolCallId: interrupt.toolCallId, content: JSON.stringify(answer) },
    ] });
    second = await run(retry, {});
    text = lastAssistantText(retry.messages);
  } else {
    const entry = mode === 'decline'
      ? { interruptId: interrupt.id, status: 'cancelled' }
      : { interruptId: interrupt.id, status: 'resolved', payload: answer };
    second = await run(agent, { resume: [entry] });
    text = lastAssistantText(agent.messages);
  }
}
process.stdout.write(JSON.stringify({ first, interrupt, second, nextInterrupt, third, text }) + '\n');
