// A fixed clock and seeded randomness, so Pi's own SessionManager writes the same bytes every run.
//
// Pi takes its entry ids from crypto.randomUUID, its session ids from uuid v7 (crypto.getRandomValues
// and Date.now) and its timestamps from `new Date()`; none can be passed in. Importing this module
// before Pi replaces those four sources: each session starts from `reset(name)`, its clock at
// 2026-01-15T09:00:00Z advancing one second per reading, its random bytes from a generator seeded
// by the session's name. Nothing in Pi's code is changed or copied.

import nodeCrypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";

const START = Date.UTC(2026, 0, 15, 9, 0, 0);
let clock = START;
let state = 0;

function nextUint32() {
	state = (state + 0x6d2b79f5) | 0; // mulberry32
	let t = Math.imul(state ^ (state >>> 15), 1 | state);
	t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
	return (t ^ (t >>> 14)) >>> 0;
}

function fill(array) {
	const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
	for (let i = 0; i < bytes.length; i++) bytes[i] = nextUint32() & 0xff;
	return array;
}

/** Start a session's clock and randomness afresh, seeded by its name. */
export function reset(name) {
	clock = START;
	state = [...name].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0, 2166136261);
}

const RealDate = Date;
class FixedDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) {
			clock += 1000;
			super(clock);
		} else {
			super(...args);
		}
	}
	static now() {
		clock += 1000;
		return clock;
	}
}
globalThis.Date = FixedDate;
Math.random = () => nextUint32() / 4294967296;
nodeCrypto.randomUUID = () => {
	const b = fill(new Uint8Array(16));
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
syncBuiltinESMExports();
globalThis.crypto.getRandomValues = fill;
