// Qwen Code's own loader over a session: SessionService.loadSession, then
// buildSessionHistoryFromConversation (the history --resume sends).
// node qwen_check.mjs QWEN_PACKAGE_DIR RUNTIME_DIR CWD SESSION_ID
// (QWEN_PACKAGE_DIR: `npm pack @qwen-code/qwen-code@0.24.4`, unpacked: everything is bundled)
const [pkg, base, cwd, id] = process.argv.slice(2);
const m = await import(`${pkg}/chunks/chunk-DPEB6S2R.js`);
const svc = new m.SessionService(cwd, { runtimeBaseDir: base });
const loaded = await svc.loadSession(id);
if (!loaded) { console.log("not loaded"); process.exit(1); }
const conversation = loaded.conversation ?? loaded;
const { apiHistory } = m.buildSessionHistoryFromConversation(conversation);
const calls = [], results = [];
for (const c of apiHistory) for (const p of c.parts ?? []) {
  if (p.functionCall) calls.push(p.functionCall.id);
  if (p.functionResponse) results.push(p.functionResponse.id);
}
console.log("records:", conversation.messages.length, "calls:", calls, "results:", results);
