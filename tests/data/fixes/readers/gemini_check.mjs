// Gemini CLI's own loader over a session file: loadConversationRecord reads it (chat JSON or
// JSONL), convertSessionToClientHistory builds the history --resume sends.
// node gemini_check.mjs DIR SESSION_FILE, DIR where `npm install @google/gemini-cli-core@0.61.0` ran
const [dir, file] = process.argv.slice(2);
const core = `${dir}/node_modules/@google/gemini-cli-core/dist/src`;
const { loadConversationRecord } = await import(`${core}/services/chatRecordingService.js`);
const { convertSessionToClientHistory } = await import(`${core}/utils/sessionUtils.js`);
const rec = await loadConversationRecord(file);
if (!rec) { console.log("not loaded"); process.exit(1); }
const calls = [], results = [];
for (const c of convertSessionToClientHistory(rec.messages)) for (const p of (c.content ?? c).parts ?? []) {
  if (p.functionCall) calls.push(p.functionCall.id);
  if (p.functionResponse) results.push([p.functionResponse.id, p.functionResponse.response]);
}
console.log("messages:", rec.messages.length, "calls:", JSON.stringify(calls), "results:", JSON.stringify(results));
