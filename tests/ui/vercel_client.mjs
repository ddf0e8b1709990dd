// Drives a Vercel AI data-stream endpoint with the real `ai` package: its chat transport and UI-message stream reader.
// Usage: node vercel_client.mjs URL MODE ANSWER_JSON
//   MODE output:  answer the pending tool part as `addToolOutput` does (state "output-available", output ANSWER_JSON)
//   MODE approve: answer it with an approval instead (state "approval-responded"), which must be refused
// Prints one JSON line: the question part the first turn ended with, and what the second turn did.
import { DefaultChatTransport, readUIMessageStream } from 'ai';

const [url, mode, answerJson] = process.argv.slice(2);
const answer = JSON.parse(answerJson);
const chatId = `chat-${Date.now()}`;
const transport = new DefaultChatTransport({ api: url });

async function turn(messages) {
  const errors = [];
  let message = null;
  const stream = await transport.sendMessages({
    chatId, messages, trigger: 'submit-message', messageId: undefined, abortSignal: undefined,
  });
  for await (const snapshot of readUIMessageStream({ stream, onError: (error) => errors.push(String(error && error.message || error)) })) {
    message = snapshot;
  }
  return { message, errors };
}

const user = { id: 'user-1', role: 'user', parts: [{ type: 'text', text: 'Deploy the service.' }] };
const first = await turn([user]);
const question = first.message && first.message.parts.find((part) => part.type === 'tool-ask_user_question');
let second = null;
if (question && question.state === 'input-available') {
  const answered = structuredClone(first.message);
  const part = answered.parts.find((p) => p.toolCallId === question.toolCallId);
  if (mode === 'approve') {
    part.state = 'approval-responded';
    part.approval = { id: question.toolCallId, approved: true };
  } else {
    part.state = 'output-available';
    part.output = answer;
  }
  second = await turn([user, answered]);
}
const text = second && second.message
  ? second.message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('')
  : null;
const data = first.message ? first.message.parts.filter((p) => p.type.startsWith('data-')) : [];
process.stdout.write(JSON.stringify({ question, data, firstErrors: first.errors, secondErrors: second && second.errors, text }) + '\n');
