#!/usr/bin/env node
// toolproof adapter for the published pi coding-agent tools (npm `@mariozechner/pi-coding-agent`
// up to 0.73.1, `@earendil-works/pi-coding-agent` after). Speaks the toolproof tool protocol
// (JSON Lines on stdin/stdout, responses matched by `id`) and does only what pi's own host loop
// does around a tool: look the tool up, run its `prepareArguments`, validate the arguments with
// pi-ai's `validateToolArguments`, call `execute(toolCallId, params, signal, onUpdate)`, and turn a
// thrown error into the model-visible message. Everything else is the package's own behaviour.
//
// Usage: node driver.mjs --pi-dir DIR [--tools read,write,edit,bash] [--surfaces pi]
//   DIR is an npm prefix with the package installed (adapters/pi/pi_setup.py makes one).
// Ops: hello, workspace {root, env, profile, clean}, call {tool, args}, cancel {target},
//      fs_read {paths}, drop {root}, shutdown. `archive` is refused: the cmd: backend extracts
//      workspaces on the host. The driver never exits on bad input.

import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { pathToFileURL } from "node:url";

const PROTOCOL_VERSION = 1;
const IMPLEMENTATION = "pi-coding-agent";
const PACKAGE_NAMES = ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"];
const OPS = ["hello", "workspace", "call", "cancel", "fs_read", "drop", "shutdown"];
// pi's factory names per protocol tool name. grep/find/ls are pi's own search tools; the corpus's
// grep/glob are MiniMax wrapper-native tools with other parameters, so they are off by default.
const FACTORIES = {
	read: "createReadTool",
	write: "createWriteTool",
	edit: "createEditTool",
	bash: "createBashTool",
	grep: "createGrepTool",
	find: "createFindTool",
	ls: "createLsTool",
};
const DEFAULT_TOOLS = ["read", "write", "edit", "bash"];
const DIALECTS = ["pi"];
// fuzzy edit matching (spec edit.10) and image reads (read.7) are the engine's own
const FEATURES = ["fuzzy-edit", "read-images"];
// Spec spec common.7; used when a tool object does not declare `executionMode` itself.
const DEFAULT_MODES = { read: "parallel", grep: "parallel", find: "parallel", ls: "parallel" };
const ABORT_MESSAGE = "Operation aborted";
const SHUTDOWN_WAIT_MS = 5000;
const ABORT_GRACE_MS = 200;

// pi's modules may log; stdout belongs to the protocol.
for (const name of ["log", "info", "debug", "warn"]) {
	console[name] = (...parts) => process.stderr.write(`${parts.map(String).join(" ")}\n`);
}
process.on("uncaughtException", (err) => process.stderr.write(`pi driver: uncaught: ${err?.stack ?? err}\n`));
process.on("unhandledRejection", (err) => process.stderr.write(`pi driver: unhandled: ${err?.stack ?? err}\n`));

class ProtocolError extends Error {}

function parseArgv(argv) {
	const opts = { piDir: process.env.TOOLPROOF_PI_DIR ?? null, tools: null, surfaces: ["pi"] };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => {
			if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
			return argv[++i];
		};
		if (arg === "--pi-dir") opts.piDir = value();
		else if (arg === "--tools") opts.tools = value().split(",").filter(Boolean);
		else if (arg === "--surfaces") opts.surfaces = value().split(",").filter(Boolean);
		else throw new Error(`unknown option ${arg}; usage: driver.mjs --pi-dir DIR [--tools LIST] [--surfaces LIST]`);
	}
	if (!opts.piDir) throw new Error("--pi-dir DIR is required (an npm prefix with pi-coding-agent installed)");
	return opts;
}

function readJson(file) {
	return JSON.parse(fs.readFileSync(file, "utf8"));
}

/** The installed package directory (and its package.json) under an npm prefix. */
function findPackage(piDir) {
	for (const name of PACKAGE_NAMES) {
		const dir = path.join(piDir, "node_modules", ...name.split("/"));
		if (fs.existsSync(path.join(dir, "package.json"))) return { dir, manifest: readJson(path.join(dir, "package.json")) };
	}
	throw new Error(`no ${PACKAGE_NAMES.join(" or ")} under ${path.join(piDir, "node_modules")}`);
}

/** The ESM entry file of `subpath` ("." or "./base") of the package in `dir`, or null. */
function exportFile(dir, manifest, subpath) {
	const entry = manifest.exports?.[subpath];
	const target = typeof entry === "string" ? entry : (entry?.import ?? entry?.default);
	if (target) return path.join(dir, target);
	if (subpath === ".") return path.join(dir, manifest.main ?? "index.js");
	return null;
}

/** pi-ai (same npm scope as the coding agent), resolved the way Node would from the package. */
function findSibling(pkgDir, piDir, scopedName) {
	let dir = pkgDir;
	for (;;) {
		const candidate = path.join(dir, "node_modules", ...scopedName.split("/"));
		if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
		const parent = path.dirname(dir);
		if (parent === dir) break;
		dir = parent;
	}
	const top = path.join(piDir, "node_modules", ...scopedName.split("/"));
	return fs.existsSync(path.join(top, "package.json")) ? top : null;
}

async function loadPi(piDir) {
	const pkg = findPackage(piDir);
	const mod = await import(pathToFileURL(exportFile(pkg.dir, pkg.manifest, ".")).href);
	const scope = pkg.manifest.name.split("/")[0];
	let validate = null;
	const aiDir = findSibling(pkg.dir, piDir, `${scope}/pi-ai`);
	if (aiDir) {
		const aiManifest = readJson(path.join(aiDir, "package.json"));
		// "./base" avoids loading every provider SDK; older releases export it from the root only.
		for (const sub of ["./base", "."]) {
			const file = exportFile(aiDir, aiManifest, sub);
			if (!file || !fs.existsSync(file)) continue;
			const ai = await import(pathToFileURL(file).href);
			if (typeof ai.validateToolArguments === "function") {
				validate = ai.validateToolArguments;
				break;
			}
		}
	}
	return { name: pkg.manifest.name, version: pkg.manifest.version, engines: pkg.manifest.engines ?? {}, mod, validate };
}

function caseSensitiveFs() {
	try {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolproof-pi-case-"));
		try {
			fs.writeFileSync(path.join(dir, "CaseProbe"), "");
			return !fs.existsSync(path.join(dir, "caseprobe"));
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	} catch {
		return true;
	}
}

function capabilities() {
	const windows = process.platform === "win32";
	return {
		os: windows ? "windows" : process.platform === "darwin" ? "macos" : "linux",
		// pi's bash tool runs bash everywhere (Git Bash on Windows)
		shell: "bash",
		symlinks: !windows,
		fifo: !windows,
		case_sensitive_fs: caseSensitiveFs(),
		root: typeof process.getuid === "function" && process.getuid() === 0,
		node: process.versions.node,
	};
}

function describePath(file) {
	let info;
	try {
		info = fs.lstatSync(file);
	} catch {
		return { kind: "absent" };
	}
	const mode = info.mode & 0o7777;
	if (info.isSymbolicLink()) return { kind: "symlink", mode, target: fs.readlinkSync(file) };
	if (info.isDirectory()) return { kind: "dir", mode };
	if (info.isFIFO()) return { kind: "fifo", mode };
	if (info.isFile()) {
		try {
			return { kind: "file", mode, data: fs.readFileSync(file).toString("base64") };
		} catch (err) {
			return { kind: "file", mode, error: String(err?.message ?? err) };
		}
	}
	return { kind: "other", mode };
}

function clearDirectory(root) {
	if (!fs.existsSync(root)) return;
	for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
}

function errorMessage(err) {
	return err instanceof Error ? err.message : String(err);
}

/** Admits calls in arrival order by execution mode: a sequential call runs after every earlier
 *  call; a parallel call runs once every earlier sequential call has finished. */
class CallSequencer {
	constructor() {
		this.lastSequential = Promise.resolve();
		this.parallelSince = [];
	}

	admit(mode) {
		let done;
		const finished = new Promise((resolve) => {
			done = resolve;
		});
		let turn;
		if (mode === "sequential") {
			turn = Promise.all([this.lastSequential, ...this.parallelSince]);
			this.lastSequential = finished;
			this.parallelSince = [];
		} else {
			turn = this.lastSequential;
			this.parallelSince.push(finished);
		}
		return { turn, done };
	}
}

class Driver {
	constructor(pi, opts) {
		this.pi = pi;
		this.baseEnv = { ...process.env };
		const exported = Object.keys(FACTORIES).filter((t) => typeof pi.mod[FACTORIES[t]] === "function");
		const wanted = opts.tools ?? DEFAULT_TOOLS;
		this.tools = wanted.filter((t) => exported.includes(t));
		this.exported = exported;
		this.surfaces = opts.surfaces;
		this.root = process.cwd();
		this.startDir = process.cwd();
		this.toolCache = new Map();
		this.inflight = new Map();
		this.sequencer = new CallSequencer();
		this.running = true;
	}

	send(obj) {
		process.stdout.write(`${JSON.stringify(obj)}\n`);
	}

	ok(id, result) {
		this.send({ id, ok: true, result });
	}

	fail(id, message, kind) {
		this.send({ id: id ?? null, ok: false, error: { message, kind } });
	}

	handleLine(line) {
		if (!line.trim()) return;
		let req;
		try {
			req = JSON.parse(line);
		} catch (err) {
			this.fail(null, `request is not valid JSON: ${errorMessage(err)}`, "protocol");
			return;
		}
		if (req === null || typeof req !== "object" || Array.isArray(req)) {
			this.fail(null, "request must be a JSON object", "protocol");
			return;
		}
		const id = req.id ?? null;
		const op = req.op;
		const handler = typeof op === "string" && OPS.includes(op) ? this[`op_${op}`] : undefined;
		if (!handler) {
			const what = op === undefined ? "missing field 'op'" : `unknown op ${JSON.stringify(op)}`;
			this.fail(id, `${what}; expected one of: ${OPS.join(", ")}`, "protocol");
			return;
		}
		try {
			handler.call(this, id, req);
		} catch (err) {
			if (err instanceof ProtocolError) this.fail(id, err.message, "protocol");
			else this.fail(id, `internal error: ${err?.stack ?? err}`, "internal");
		}
	}

	op_hello(id) {
		this.ok(id, {
			protocol: PROTOCOL_VERSION,
			implementation: IMPLEMENTATION,
			version: this.pi.version,
			package: this.pi.name,
			surface: this.surfaces[0] ?? "pi",
			surfaces: this.surfaces,
			tools: this.tools,
			pi_tools: this.exported,
			ops: OPS,
			patches: [],
			// what a published release is (toolproof's docs/scenario-format.md, "Behaviour, wording
			// and features"): pi's wording, the optional features of pi's engine, none of MiniMax's patches
			dialects: DIALECTS,
			features: FEATURES,
			absent_patches: "all",
			validation: this.pi.validate ? "pi-ai validateToolArguments" : "none",
			capabilities: capabilities(),
		});
	}

	op_workspace(id, req) {
		const root = req.root;
		if (typeof root !== "string" || !root) throw new ProtocolError("workspace: field 'root' must be a non-empty string");
		const env = req.env ?? {};
		if (typeof env !== "object" || Array.isArray(env) || !Object.values(env).every((v) => v === null || typeof v === "string")) {
			throw new ProtocolError("workspace: field 'env' must be an object of string (or null) values");
		}
		if (req.archive !== undefined && req.archive !== null) {
			throw new ProtocolError("workspace: 'archive' is not supported by the pi driver; use the cmd: backend, which extracts the workspace on the host");
		}
		if (req.profile !== undefined && req.profile !== null && (typeof req.profile !== "object" || Array.isArray(req.profile))) {
			throw new ProtocolError("workspace: field 'profile' must be an object");
		}
		const abs = path.resolve(root);
		if (req.clean) clearDirectory(abs);
		fs.mkdirSync(abs, { recursive: true });
		// The tools read HOME, TMPDIR, PATH, PI_CODING_AGENT_DIR from process.env when they run.
		for (const key of Object.keys(process.env)) if (!(key in this.baseEnv)) delete process.env[key];
		Object.assign(process.env, this.baseEnv);
		for (const [key, value] of Object.entries(env)) {
			if (value === null) delete process.env[key];
			else process.env[key] = value;
		}
		this.root = abs;
		// pi runs in its project directory: what a tool resolves against process.cwd() (ripgrep's
		// --glob patterns in grep) is relative to the workspace, as in a real session
		process.chdir(abs);
		this.toolCache.clear();
		// pi cannot be reconfigured: a profile overlay is accepted and ignored (reported back).
		this.ok(id, { root: abs, members: 0, patches: [], wrapper: false, profile_ignored: req.profile != null });
	}

	tool(name) {
		let tool = this.toolCache.get(name);
		if (!tool) {
			tool = this.pi.mod[FACTORIES[name]](this.root);
			this.toolCache.set(name, tool);
		}
		return tool;
	}

	op_call(id, req) {
		const name = req.tool;
		if (typeof name !== "string") throw new ProtocolError("call: field 'tool' must be a string");
		if (!this.tools.includes(name)) {
			this.fail(id, `Tool ${name} not found`, "validation");
			return;
		}
		const tool = this.tool(name);
		const mode = tool.executionMode ?? DEFAULT_MODES[name] ?? "sequential";
		const controller = new AbortController();
		this.inflight.set(id, controller);
		const { turn, done } = this.sequencer.admit(mode);
		const callId = String(req.call_id ?? `toolproof-${randomBytes(6).toString("hex")}`);
		turn
			.then(() => this.runCall(id, name, tool, req.args ?? {}, callId, controller.signal))
			.catch((err) => this.fail(id, `internal error: ${err?.stack ?? err}`, "internal"))
			.finally(() => {
				done();
				this.inflight.delete(id);
			});
	}

	async runCall(id, name, tool, rawArgs, callId, signal) {
		let args;
		try {
			// pi's agent loop: prepareArguments, then schema validation (with coercion), then execute
			args = typeof tool.prepareArguments === "function" ? tool.prepareArguments(rawArgs) : rawArgs;
			if (this.pi.validate) args = this.pi.validate(tool, { type: "toolCall", id: callId, name, arguments: args });
		} catch (err) {
			this.fail(id, errorMessage(err), "validation");
			return;
		}
		if (signal.aborted) {
			this.fail(id, ABORT_MESSAGE, "aborted");
			return;
		}
		try {
			const result = await tool.execute(callId, args, signal, () => {});
			this.ok(id, {
				content: Array.isArray(result?.content) ? result.content : [],
				details: result?.details === undefined ? null : result.details,
				is_error: result?.isError === true,
			});
		} catch (err) {
			this.fail(id, errorMessage(err), signal.aborted ? "aborted" : "tool");
		}
	}

	op_cancel(id, req) {
		const controller = this.inflight.get(req.target);
		if (controller) controller.abort();
		this.ok(id, { cancelled: controller !== undefined });
	}

	op_fs_read(id, req) {
		const paths = req.paths;
		if (!Array.isArray(paths) || !paths.every((p) => typeof p === "string")) {
			throw new ProtocolError("fs_read: field 'paths' must be a list of strings");
		}
		const { turn, done } = this.sequencer.admit("sequential");
		turn
			.then(() => {
				const files = {};
				for (const p of paths) files[p] = describePath(path.join(this.root, p));
				this.ok(id, { files });
			})
			.catch((err) => this.fail(id, `internal error: ${err?.stack ?? err}`, "internal"))
			.finally(done);
	}

	op_drop(id, req) {
		const root = req.root;
		if (typeof root !== "string" || !root) throw new ProtocolError("drop: field 'root' must be a non-empty string");
		if (path.resolve(root) === process.cwd()) process.chdir(this.startDir);
		fs.rmSync(root, { recursive: true, force: true });
		this.ok(id, { dropped: root });
	}

	op_shutdown(id) {
		this.running = false;
		this.ok(id, { bye: true });
	}
}

async function main() {
	let opts;
	let pi;
	try {
		opts = parseArgv(process.argv.slice(2));
		pi = await loadPi(path.resolve(opts.piDir));
	} catch (err) {
		process.stderr.write(`pi driver: ${errorMessage(err)}\n`);
		process.exit(2);
	}
	const driver = new Driver(pi, opts);
	const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
	// Like the reference server: calls already admitted finish (for a bounded time) before exit.
	const finish = () => {
		const deadline = Date.now() + SHUTDOWN_WAIT_MS;
		const poll = () => {
			if (driver.inflight.size === 0) process.exit(0);
			if (Date.now() >= deadline) {
				for (const controller of driver.inflight.values()) controller.abort();
				// aborted bash calls kill their process groups; give them a moment
				setTimeout(() => process.exit(0), ABORT_GRACE_MS);
				return;
			}
			setTimeout(poll, 20);
		};
		poll();
	};
	rl.on("line", (line) => {
		if (!driver.running) return;
		driver.handleLine(line);
		if (!driver.running) {
			rl.close();
		}
	});
	rl.on("close", finish);
}

main();
