// What Pi itself sends for each shipped session: its own loader, buildSessionContext,
// convertToLlm and the provider transform, written as JSON fixtures the kit's tests read.
//
//   cd scripts/pi-oracle && npm ci && node oracle.mjs
//
// Each message of the context is named by the line of the session file it came from (the
// line numbers are counted here the way Pi's loader reads the file), so the kit's import can
// be compared message by message without sharing any code with it.

import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

import { convertToLlm, SessionManager } from "@mariozechner/pi-coding-agent";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const sessionsDir = join(root, "course", "data", "pi-sessions");
const fixturesDir = join(root, "tests", "interop", "pi-oracle");

const modules = join(here, "node_modules", "@mariozechner");
const piVersion = JSON.parse(readFileSync(join(modules, "pi-coding-agent", "package.json"), "utf8")).version;
// transformMessages is not in pi-ai's export map; load the module by its file.
const { transformMessages } = await import(
	pathToFileURL(join(modules, "pi-ai", "dist", "providers", "transform-messages.js")).href
);

/** The 1-based lines Pi's loader keeps (in its order) and those it skips as unreadable. */
function readLines(text) {
	const kept = [];
	const unreadable = [];
	text
		.trim()
		.split("\n")
		.forEach((line, index) => {
			if (!line.trim()) return;
			try {
				JSON.parse(line);
				kept.push(index + 1);
			} catch {
				unreadable.push(index + 1);
			}
		});
	return { kept, unreadable };
}

function sha256(text) {
	return createHash("sha256").update(text, "utf8").digest("hex");
}

const SOURCE = Symbol("source");
const BEFORE_TRANSFORM = Symbol("before transform");

/** The comparable part of one message as the model receives it: its own text and tool calls.
 * The transform turns thinking into text for another model; the text compared is the
 * message's own, from before the transform. */
function describe(message) {
	const own = message[BEFORE_TRANSFORM] ?? message;
	const content = typeof own.content === "string" ? [{ type: "text", text: own.content }] : own.content;
	const texts = content.filter((block) => block.type === "text").map((block) => block.text);
	const described = {
		role: message.role,
		...message[SOURCE],
		textSha256: sha256(texts.join("\u0000")),
	};
	if (message.role === "assistant") {
		described.toolCalls = content.filter((b) => b.type === "toolCall").map((b) => [b.id, b.name]);
	}
	if (message.role === "toolResult") {
		described.toolCallId = message.toolCallId;
		described.isError = message.isError;
	}
	return described;
}

function oracle(name, file) {
	const raw = gunzipSync(readFileSync(file));
	const text = raw.toString("utf8");
	const work = mkdtempSync(join(tmpdir(), "pi-oracle-"));
	try {
		const copy = join(work, `${name}.jsonl`);
		writeFileSync(copy, raw);
		const manager = SessionManager.open(copy, work);
		const { kept: lines, unreadable } = readLines(text);
		const entries = manager.getEntries();
		const lineOf = new Map(entries.map((entry, index) => [entry.id, lines[index + 1]]));
		const leaf = manager.getLeafEntry();
		const context = manager.buildSessionContext();
		const path = manager.getBranch();
		const compaction = [...path].reverse().find((entry) => entry.type === "compaction");
		// Tag every message with the line it came from, through Pi's own conversion.
		const byMessage = new Map(path.filter((e) => e.type === "message").map((e) => [e.message, e]));
		const tagged = context.messages.flatMap((message) => {
			const entry = byMessage.get(message);
			const source =
				message.role === "compactionSummary"
					? { summaryOf: lineOf.get(compaction.id) }
					: entry
						? { line: lineOf.get(entry.id) }
						: { line: null };
			return convertToLlm([message]).map((converted) => {
				converted[SOURCE] = source;
				converted[BEFORE_TRANSFORM] = converted;
				return converted;
			});
		});
		const model = { provider: "pi-oracle", api: "pi-oracle", id: "pi-oracle", input: ["text", "image"] };
		const sent = transformMessages(tagged, model).map((message) => {
			if (!message[SOURCE] && message.role === "toolResult") message[SOURCE] = { synthetic: true };
			return message;
		});
		const sentLines = new Set(sent.map((m) => m[SOURCE]?.line).filter((line) => line != null));
		const dropped = tagged
			.filter((m) => m[SOURCE].line != null && !sentLines.has(m[SOURCE].line))
			.map((m) => ({ line: m[SOURCE].line, stopReason: m.stopReason ?? null }));
		return {
			session: `${name}.jsonl.gz`,
			sha256: createHash("sha256").update(raw).digest("hex"),
			pi: { package: "@mariozechner/pi-coding-agent", version: piVersion },
			unreadableLines: unreadable,
			leafLine: lineOf.get(leaf.id),
			compaction: compaction
				? { line: lineOf.get(compaction.id), firstKeptLine: lineOf.get(compaction.firstKeptEntryId) ?? null }
				: null,
			droppedBeforeSend: dropped,
			messages: sent.map(describe),
		};
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}

const names = readdirSync(sessionsDir)
	.filter((file) => file.endsWith(".jsonl.gz"))
	.map((file) => file.slice(0, -".jsonl.gz".length))
	.sort();
for (const name of names) {
	const expected = oracle(name, join(sessionsDir, `${name}.jsonl.gz`));
	const target = join(fixturesDir, `${name}.json`);
	writeFileSync(target, `${JSON.stringify(expected, null, 1)}\n`);
	console.log(`${target}: ${expected.messages.length} messages (Pi ${piVersion})`);
}
