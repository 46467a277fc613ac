// What Pi itself sends for each shipped session and for each session sessions.mjs writes with
// Pi's own SessionManager: its loader, buildSessionContext, convertToLlm and the provider
// transform, written as JSON fixtures the kit's tests read.
//
//   cd scripts/pi-oracle && npm ci && node oracle.mjs           # (re)write every fixture
//   cd scripts/pi-oracle && npm ci && node oracle.mjs --check   # exit 1 if one would change
//
// Each message of the context is named by the line of the session file it came from (the
// line numbers are counted here the way Pi's loader reads the file), so the kit's import can
// be compared message by message without sharing any code with it.

import "./determinism.mjs";

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

import { convertToLlm, SessionManager } from "@mariozechner/pi-coding-agent";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const sessionsDir = join(root, "course", "data", "pi-sessions");
const fixturesDir = join(root, "tests", "interop", "pi-oracle");
const writtenDir = join(fixturesDir, "written");
const { SESSION_NAMES } = await import("./sessions.mjs");

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
		// sent to another model, thinking becomes text (blank thinking is left out)
		const sent = message.content.filter((block) => block.type === "text").map((block) => block.text);
		if (sent.join("\u0000") !== texts.join("\u0000")) described.sentTextSha256 = sha256(sent.join("\u0000"));
	}
	if (message.role === "toolResult") {
		described.toolCallId = message.toolCallId;
		described.isError = message.isError;
	}
	return described;
}

/** The path's entries that give the context's messages, in buildSessionContext's order. */
function messageSources(path, compaction) {
	const gives = (e) => e.type === "message" || e.type === "custom_message" || (e.type === "branch_summary" && e.summary);
	if (!compaction) return path.filter(gives);
	const at = path.indexOf(compaction);
	const kept = path.findIndex((e) => e.id === compaction.firstKeptEntryId);
	const before = kept >= 0 && kept < at ? path.slice(kept, at) : [];
	return [compaction, ...before.filter(gives), ...path.slice(at + 1).filter(gives)];
}

/** What Pi sends for the session file `raw` (bytes); `withIds` names each message's entry id too. */
function oracle(session, raw, withIds) {
	const text = raw.toString("utf8");
	const work = mkdtempSync(join(tmpdir(), "pi-oracle-"));
	try {
		const copy = join(work, "session.jsonl");
		writeFileSync(copy, raw);
		const manager = SessionManager.open(copy, work);
		const { kept: lines, unreadable } = readLines(text);
		const entries = manager.getEntries();
		const lineOf = new Map(entries.map((entry, index) => [entry.id, lines[index + 1]]));
		const leaf = manager.getLeafEntry();
		const context = manager.buildSessionContext();
		const path = manager.getBranch();
		const compaction = [...path].reverse().find((entry) => entry.type === "compaction");
		const sources = messageSources(path, compaction);
		if (sources.length !== context.messages.length) throw new Error(`${session}: messages and entries differ`);
		const tagged = context.messages.flatMap((message, index) => {
			const entry = sources[index];
			const source = entry.type === "compaction" ? { summaryOf: lineOf.get(entry.id) } : { line: lineOf.get(entry.id) };
			if (withIds) source.id = entry.id;
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
			.map((m) => ({ line: m[SOURCE].line, ...(withIds ? { id: m[SOURCE].id } : {}), stopReason: m.stopReason ?? null }));
		return {
			session,
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

/** Every fixture as [path, text]: the shipped sessions' contexts, then each written session and its context. */
function fixtures() {
	const out = [];
	const shipped = readdirSync(sessionsDir)
		.filter((file) => file.endsWith(".jsonl.gz"))
		.map((file) => file.slice(0, -".jsonl.gz".length))
		.sort();
	for (const name of shipped) {
		const raw = gunzipSync(readFileSync(join(sessionsDir, `${name}.jsonl.gz`)));
		out.push([join(fixturesDir, `${name}.json`), oracle(`${name}.jsonl.gz`, raw, false)]);
	}
	for (const name of SESSION_NAMES) {
		const raw = execFileSync(process.execPath, [join(here, "sessions.mjs"), name]);
		out.push([join(writtenDir, `${name}.jsonl`), raw.toString("utf8")]);
		out.push([join(writtenDir, `${name}.json`), oracle(`${name}.jsonl`, raw, true)]);
	}
	return out.map(([target, value]) => [target, typeof value === "string" ? value : `${JSON.stringify(value, null, 1)}\n`]);
}

const check = process.argv.includes("--check");
let stale = 0;
mkdirSync(writtenDir, { recursive: true });
for (const [target, text] of fixtures()) {
	const shown = relative(root, target);
	if (check) {
		if (!existsSync(target) || readFileSync(target, "utf8") !== text) {
			stale += 1;
			console.log(`${shown}: differs from what Pi ${piVersion} writes now`);
		}
	} else {
		writeFileSync(target, text);
		console.log(`${shown} (Pi ${piVersion})`);
	}
}
if (check) {
	console.log(stale ? `${stale} fixtures are stale: run node oracle.mjs` : `every fixture is what Pi ${piVersion} writes`);
	process.exit(stale ? 1 : 0);
}
