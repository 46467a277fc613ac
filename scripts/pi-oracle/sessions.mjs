// Session files written by Pi's own SessionManager, no model: one per structure Pi can write.
//
// Every message is appended through SessionManager.appendMessage (assistant replies are built
// with pi-ai's fauxAssistantMessage); compactions are Pi's own prepareCompaction and compact,
// whose two model calls (history and turn prefix) a faux provider answers with fixed Markdown;
// branches, labels, forks, model changes and extension entries are SessionManager's own calls.
// determinism.mjs fixes the clock, the ids and the random bytes, so the bytes repeat.

import { reset } from "./determinism.mjs";

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules", "@mariozechner");
const { SessionManager, compact } = await import("@mariozechner/pi-coding-agent");
const { prepareCompaction } = await import(
	pathToFileURL(join(modules, "pi-coding-agent", "dist", "core", "compaction", "compaction.js")).href
);
const { fauxAssistantMessage, fauxText, fauxThinking, fauxToolCall, registerFauxProvider } = await import(
	"@mariozechner/pi-ai"
);

const CWD = "/home/learner/shop";
const HISTORY = `## Goal
Make the shopping cart total correct for discounted items.

## Constraints & Preferences
- Keep the public API of Cart unchanged

## Progress
### Done
- [x] Read the cart and its tests

### In Progress
- [ ] Fix the rounding in the total

### Blocked
- (none)

## Key Decisions
- **Round once, at the end**: rounding each line lost cents

## Next Steps
1. Run the test suite

## Critical Context
- Prices are integers in cents`;
const TURN_PREFIX = `## Original Request
Fix the discount rounding in src/components/Cart.tsx.

## Early Progress
- Read Cart.tsx and found the per-line rounding

## Context for Suffix
- The edit below replaces Math.round per line`;

const faux = registerFauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
faux.setResponses(
	Array.from({ length: 64 }, () => (context) => {
		const prompt = JSON.stringify(context.messages.at(-1).content);
		return fauxAssistantMessage(prompt.includes("PREFIX of a turn") ? TURN_PREFIX : HISTORY);
	}),
);

const user = (content) => ({ role: "user", content, timestamp: Date.now() });
const reply = (content, options) => fauxAssistantMessage(content, options);
const call = (name, args, id) => fauxToolCall(name, args, { id });
const result = (toolCallId, toolName, content, isError = false) => ({
	role: "toolResult",
	toolCallId,
	toolName,
	content: typeof content === "string" ? [{ type: "text", text: content }] : content,
	isError,
	timestamp: Date.now(),
});
const filler = (label, lines) =>
	Array.from({ length: lines }, (_, i) => `${label} ${i + 1}: const line${i} = price * quantity;`).join("\n");
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** Pi's own compaction of the current branch; `check` asserts what the scenario needs. */
async function compactNow(sm, keepRecentTokens, check = () => true) {
	const preparation = prepareCompaction(sm.getBranch(), { enabled: true, reserveTokens: 2000, keepRecentTokens });
	if (!preparation || !check(preparation, sm)) {
		throw new Error(`compaction preparation does not fit the scenario (keep ${keepRecentTokens})`);
	}
	const done = await compact(preparation, faux.getModel(), "no-key");
	return sm.appendCompaction(done.summary, done.firstKeptEntryId, done.tokensBefore, done.details, false);
}

/** A user request and a reply reading one file (the first reply after the tool result). */
function readTurn(sm, request, path, id, answer) {
	const u = sm.appendMessage(user(request));
	sm.appendMessage(reply([fauxText(`Reading ${path}.`), call("read", { path }, id)], { stopReason: "toolUse" }));
	sm.appendMessage(result(id, "read", filler(path, 30)));
	const a = sm.appendMessage(reply(answer));
	return { u, a };
}

const SCENARIOS = {
	"aborted-and-error": async (sm) => {
		sm.appendMessage(user("List the files in src."));
		sm.appendMessage(reply([call("bash", { command: "ls src" }, "call_ls")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_ls", "bash", "cart.ts\nindex.ts"));
		sm.appendMessage(
			reply([fauxText("Now the cart"), call("read", { path: "src/cart.ts" }, "call_cat")], {
				stopReason: "aborted",
				errorMessage: "Request was aborted",
			}),
		);
		sm.appendMessage(user("Only the README, please."));
		sm.appendMessage(reply([], { stopReason: "error", errorMessage: "overloaded_error: Overloaded" }));
		sm.appendMessage(user("Once more."));
		sm.appendMessage(reply("The README describes the shop's cart."));
	},
	"branch-summary": async (sm) => {
		const { a } = readTurn(sm, "What does the cart do?", "src/cart.ts", "call_1", "It sums line prices.");
		sm.appendMessage(user("Rewrite it in Rust."));
		sm.appendMessage(reply([call("write", { path: "src/cart.rs", content: "fn main() {}" }, "call_2")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_2", "write", "Wrote src/cart.rs"));
		sm.appendMessage(reply("Started a Rust port."));
		sm.branchWithSummary(
			a,
			"## Goal\nPort the cart to Rust.\n\n## Progress\n### Done\n- [x] Wrote src/cart.rs\n\n<modified-files>\nsrc/cart.rs\n</modified-files>",
			{ readFiles: [], modifiedFiles: ["src/cart.rs"] },
			false,
		);
		sm.appendMessage(user("Keep TypeScript; add a test instead."));
		sm.appendMessage(reply("Added a test for the total."));
	},
	"compaction-on-branch": async (sm) => {
		const first = readTurn(sm, "Read the cart.", "src/cart.ts", "call_1", "Read it.");
		sm.appendMessage(user("Delete the cart."));
		sm.appendMessage(reply("Deleted."));
		sm.branch(first.a);
		readTurn(sm, "Read the totals.", "src/total.ts", "call_2", "The total rounds per line.");
		readTurn(sm, "Read the tests.", "test/total.test.ts", "call_3", "One test covers discounts.");
		await compactNow(sm, 200);
		sm.appendMessage(user("Fix the rounding."));
		sm.appendMessage(reply("Rounded once, at the end."));
	},
	"resume-after-compaction": async (sm, dir) => {
		readTurn(sm, "Read the cart.", "src/cart.ts", "call_1", "Read it.");
		readTurn(sm, "Read the totals.", "src/total.ts", "call_2", "The total rounds per line.");
		await compactNow(sm, 200);
		const resumed = SessionManager.open(sm.getSessionFile(), dir);
		resumed.appendMessage(user("Where were we?"));
		resumed.appendMessage(reply("Fixing the rounding in the total."));
		return resumed;
	},
	"split-turn": async (sm) => {
		readTurn(sm, "Read the cart.", "src/cart.ts", "call_1", "Read it.");
		splitTurnBody(sm);
		await compactNow(sm, 700, (p) => p.isSplitTurn && p.turnPrefixMessages.length > 0);
		sm.appendMessage(user("Run the tests."));
		sm.appendMessage(reply("All tests pass."));
	},
	"split-turn-follow-up": async (sm) => {
		readTurn(sm, "Read the cart.", "src/cart.ts", "call_1", "Read it.");
		splitTurnBody(sm);
		await compactNow(sm, 700, (p) => p.isSplitTurn);
		sm.appendMessage(reply([call("read", { path: "src/tax.ts" }, "call_9")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_9", "read", filler("src/tax.ts", 40)));
		sm.appendMessage(reply([call("edit", { path: "src/tax.ts", oldText: "a", newText: "b" }, "call_10")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_10", "edit", filler("edited src/tax.ts", 40)));
		sm.appendMessage(reply("Tax rounding fixed too."));
		await compactNow(sm, 300, (p) => !p.isSplitTurn);
	},
	images: async (sm) => {
		sm.appendMessage(user([{ type: "text", text: "What is wrong in this screenshot?" }, { type: "image", data: PNG, mimeType: "image/png" }]));
		sm.appendMessage(reply([call("read", { path: "shots/cart.png" }, "call_img")], { stopReason: "toolUse" }));
		sm.appendMessage(
			result("call_img", "read", [{ type: "text", text: "Read image file [image/png]" }, { type: "image", data: PNG, mimeType: "image/png" }]),
		);
		sm.appendMessage(reply("The total shows 9.99 for two 5.00 items."));
	},
	"parallel-tools": async (sm) => {
		sm.appendMessage(user("Read the three cart files."));
		sm.appendMessage(
			reply(
				[
					fauxText("Reading all three."),
					call("read", { path: "src/a.ts" }, "call_a"),
					call("read", { path: "src/b.ts" }, "call_b"),
					call("read", { path: "src/missing.ts" }, "call_c"),
				],
				{ stopReason: "toolUse" },
			),
		);
		sm.appendMessage(result("call_c", "read", "ENOENT: src/missing.ts", true));
		sm.appendMessage(result("call_a", "read", "export const a = 1;"));
		sm.appendMessage(result("call_b", "read", "export const b = 2;"));
		sm.appendMessage(reply("a and b exist; missing.ts does not."));
	},
	"extension-entries": async (sm) => {
		sm.appendSessionInfo("cart rounding");
		sm.appendThinkingLevelChange("high");
		sm.appendModelChange("faux", "faux-1");
		sm.appendMessage(user("Plan the fix."));
		sm.appendCustomEntry("todo-extension", { items: ["read", "fix"] });
		sm.appendCustomMessageEntry("reminder", "Remember: prices are in cents.", true, { source: "ext" });
		sm.appendMessage(reply("Plan: read, then fix."));
		sm.appendModelChange("faux", "faux-2");
		sm.appendCustomMessageEntry("hidden-context", [{ type: "text", text: "The user prefers small commits." }], false);
		sm.appendMessage(user("Go."));
		sm.appendMessage({ role: "custom", customType: "note", content: "A note from an extension.", display: true, timestamp: Date.now() });
		sm.appendMessage(reply("Done."));
	},
	"legacy-v2": async (sm) => {
		sm.appendMessage(user("Hello."));
		sm.appendMessage({ role: "custom", customType: "hook", content: "Hook context.", display: true, timestamp: Date.now() });
		sm.appendMessage(reply("Hello, how can I help?"));
		sm.appendMessage(user("Bye."));
		sm.appendMessage(reply("Bye."));
		return { legacy: true };
	},
	"fork-after-label": async (sm, dir) => {
		const { a } = readTurn(sm, "Read the cart.", "src/cart.ts", "call_1", "Read it.");
		sm.appendLabelChange(a, "checkpoint");
		sm.appendMessage(user("Read the totals."));
		sm.appendMessage(reply([call("read", { path: "src/total.ts" }, "call_2")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_2", "read", "export function total() {}"));
		sm.appendMessage(reply("The total rounds per line."));
		const forkAt = sm.appendMessage(user("Now delete everything."));
		sm.appendMessage(reply("Refusing."));
		// /fork at a user message: the new session holds the path to that message's parent
		const source = SessionManager.open(sm.getSessionFile(), dir);
		const forked = SessionManager.open(source.createBranchedSession(source.getEntry(forkAt).parentId), dir);
		forked.appendMessage(user("Fix the rounding instead."));
		forked.appendMessage(reply("Rounded once, at the end."));
		return forked;
	},
	"thinking-only": async (sm) => {
		sm.appendMessage(user("Think about the rounding."));
		sm.appendMessage(reply([fauxThinking("Rounding per line loses a cent on 3 x 0.333.")]));
		sm.appendMessage(user("And now?"));
		sm.appendMessage(reply([fauxThinking("Round the sum."), fauxText("Round once, at the end.")]));
		sm.appendMessage(user("Check it."));
		sm.appendMessage(reply([fauxThinking("Read the test."), call("read", { path: "test/total.test.ts" }, "call_t")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_t", "read", "expect(total).toBe(100)"));
		sm.appendMessage(reply([fauxThinking("   ")]));
	},
	"reused-call-id": async (sm) => {
		sm.appendMessage(user("Read the cart, then run the tests."));
		sm.appendMessage(reply([call("read", { path: "src/cart.ts" }, "call_0")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_0", "read", "export class Cart {}"));
		sm.appendMessage(reply([call("bash", { command: "npm test" }, "call_0")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_0", "bash", "1 passing"));
		sm.appendMessage(reply("Read it; the tests pass."));
		sm.appendMessage(user("And the totals?"));
		sm.appendMessage(reply([call("read", { path: "src/total.ts" }, "call_0")], { stopReason: "toolUse" }));
		sm.appendMessage(result("call_0", "read", "export function total() {}"));
		sm.appendMessage(reply("It rounds per line."));
	},
	"kept-from-model-change": async (sm) => {
		readTurn(sm, "Read the cart.", "src/cart.ts", "call_1", "Read it.");
		readTurn(sm, "Read the totals.", "src/total.ts", "call_2", "The total rounds per line.");
		sm.appendModelChange("faux", "faux-2");
		sm.appendMessage(user(`Summarise what you know. ${filler("note", 12)}`));
		sm.appendMessage(reply("The cart sums lines; the total rounds per line."));
		await compactNow(sm, 100, (p, s) => s.getEntry(p.firstKeptEntryId).type === "model_change");
		sm.appendMessage(user("Fix it."));
		sm.appendMessage(reply("Fixed."));
	},
	"kept-before-earlier-compaction": async (sm) => {
		readTurn(sm, "Read the cart.", "src/cart.ts", "call_1", "Read it.");
		readTurn(sm, "Read the totals.", "src/total.ts", "call_2", "The total rounds per line.");
		const first = await compactNow(sm, 200);
		sm.appendMessage(user("Fix it."));
		sm.appendMessage(reply("Fixed."));
		const kept = sm.getEntry(first).firstKeptEntryId;
		await compactNow(sm, 100000, (p) => p.firstKeptEntryId === kept);
		sm.appendMessage(user("Thanks."));
		sm.appendMessage(reply("You're welcome."));
	},
};

/** The long turn a split-turn compaction cuts: one request, several tool rounds. */
function splitTurnBody(sm) {
	sm.appendMessage(user("Fix the discount rounding in src/components/Cart.tsx."));
	sm.appendMessage(reply([call("read", { path: "src/components/Cart.tsx" }, "call_5")], { stopReason: "toolUse" }));
	sm.appendMessage(result("call_5", "read", filler("src/components/Cart.tsx", 60)));
	sm.appendMessage(
		reply([call("edit", { path: "src/components/Cart.tsx", oldText: "Math.round", newText: "" }, "call_7")], { stopReason: "toolUse" }),
	);
	sm.appendMessage(result("call_7", "edit", filler("edited", 20)));
	sm.appendMessage(reply([call("read", { path: "src/lib/money.ts" }, "call_6")], { stopReason: "toolUse" }));
	sm.appendMessage(result("call_6", "read", filler("src/lib/money.ts", 60)));
	sm.appendMessage(reply([call("bash", { command: "npm test" }, "call_8")], { stopReason: "toolUse" }));
	sm.appendMessage(result("call_8", "bash", filler("test", 20)));
	sm.appendMessage(reply("The discount now rounds once."));
}

/** The names of every scenario, in a stable order. */
export const SESSION_NAMES = Object.keys(SCENARIOS).sort();

/** Where Pi would keep the sessions of CWD; the temporary folder's name is replaced by it. */
const SESSION_DIR = "/home/learner/.pi/agent/sessions/--home-learner-shop--";

/** Write the session `name` with Pi's own SessionManager; returns its file's text.
 * One session per process: uuid v7 keeps state between calls, so a fresh process is what
 * makes a session's bytes independent of which sessions were written before it. */
async function writeSession(name) {
	reset(name);
	const dir = mkdtempSync(join(tmpdir(), "pi-sessions-"));
	try {
		const sm = SessionManager.create(CWD, dir);
		const outcome = await SCENARIOS[name](sm, dir);
		const last = outcome instanceof SessionManager ? outcome : sm;
		const text = readFileSync(last.getSessionFile(), "utf8").replaceAll(dir, SESSION_DIR);
		return outcome?.legacy ? toVersion2(text) : text;
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** A v3 file as Pi before v3 wrote it: header version 2 and the role `hookMessage`. */
function toVersion2(text) {
	return text
		.split("\n")
		.map((line) => {
			if (!line) return line;
			const entry = JSON.parse(line);
			if (entry.type === "session") entry.version = 2;
			if (entry.type === "message" && entry.message.role === "custom") entry.message.role = "hookMessage";
			return JSON.stringify(entry);
		})
		.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const name = process.argv[2];
	if (!SESSION_NAMES.includes(name)) {
		console.error(`usage: node sessions.mjs NAME (one of ${SESSION_NAMES.join(", ")})`);
		process.exit(2);
	}
	process.stdout.write(await writeSession(name));
}
