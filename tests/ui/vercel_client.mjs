// Drives a Vercel AI data-stream endpoint with the real `ai` package: its chat transport and UI-message stream reader.
// Usage: node vercel_client.mjs URL MODE ANSWER_JSON
//   MODE output:  answer the pending tool part as `addToolOutput` does (state "output-available", output ANSWER_JSON)
//   MODE approve: answer it with an approval instead (state "approval-responded"), which must be refused
//   MODE parts:   replace the pending tool part with one copy of it per item of ANSWER_JSON, each item's keys
//                 set on its copy ("{call}" in a value replaced by the tool call id): duplicates, denials, errors
//   MODE twice:   answer with ANSWER_JSON[0] as in output, then the second turn's question with ANSWER_JSON[1]
// Prints one JSON line: the question part the first turn ended with, and what the second (and third) turn did.
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
function answeredCopy(message, output) {
  const answered = structuredClone(message);
  const part = answered.parts.find((p) => p.type === 'tool-ask_user_question' && p.state === 'input-available');
  part.state = 'output-available';
  part.output = output;
  return answered;
}

function filled(value, call) {
  if (typeof value === 'string') return value.replaceAll('{call}', call);
  if (Array.isArray(value)) return value.map((item) => filled(item, call));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, filled(v, call)]));
  return value;
}

let second = null;
let third = null;
let nextQuestion = null;
if (question && question.state === 'input-available' && mode === 'parts') {
  const answered = structuredClone(first.message);
  const index = answered.parts.findIndex((p) => p.toolCallId === question.toolCallId);
  const copies = answer.map((patch) => ({ ...structuredClone(question), ...filled(patch, question.toolCallId) }));
  answered.parts.splice(index, 1, ...copies);
  second = await turn([user, answered]);
} else if (question && question.state === 'input-available' && mode === 'twice') {
  const answered = answeredCopy(first.message, answer[0]);
  second = await turn([user, answered]);
  nextQuestion = second.message && second.message.parts.find(
    (part) => part.type === 'tool-ask_user_question' && part.state === 'input-available');
  if (nextQuestion) {
    third = await turn([user, answered, answeredCopy(second.message, answer[1])]);
  }
} else if (question && question.state === 'input-available') {
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
const last = third || second;
const text = last && last.message
  ? last.message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('')
  : null;
const data = first.message ? first.message.parts.filter((p) => p.type.startsWith('data-')) : [];
process.stdout.write(JSON.stringify({
  question, data, firstErrors: first.errors, secondErrors: second && second.errors,
  nextQuestion, thirdErrors: third && third.errors, text,
}) + '\n');
