#!/usr/bin/env node
// An example toolproof adapter in Node.js: the tool protocol on stdin/stdout, three tools.
//
// Copy it into your repository (`toolproof init --adapter node` does) and replace the bodies of
// toolRead, toolWrite and toolBash with calls into your own tool layer; add the other tools
// (edit, grep, glob) to TOOLS as you wire them up. Scenarios that call a tool missing from TOOLS are
// skipped with the reason, never failed.
//
// Protocol (JSON Schema: tools_impl/protocol/protocol.schema.json in toolproof): one JSON object
// per line each way, answered by id. The answer is {id, ok: true, result} or
// {id, ok: false, error: {message, kind}}. This adapter answers hello, workspace, call and
// shutdown; anything else is a "protocol" error. A tool that fails throws ToolError: its message
// is what the model sees.
//
// Run it: toolproof run toolproof: --backend "cmd:node adapter.mjs". Node 18 or later, no packages.
//
// Your own code: import it by a path relative to this file (import { readFile } from
// "../src/tools.mjs"), or by package name once it is installed in node_modules. In the docker job,
// `toolproof images adapter --project .` copies the repository into the image as /opt/adapter/
// (this file becomes /opt/adapter/toolproof/adapter.mjs), so the same relative imports resolve
// there; commit or vendor what your code needs from npm, or `--base` an image that has it.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";

// The name this implementation reports in hello: runs, reports and the baseline's implementation:
// carry it (`toolproof init` sets it to your project's name).
const IMPLEMENTATION = "example-node-adapter";
const VERSION = "0.1.0";
const DEFAULT_LIMIT = 2000; // lines a read returns when no limit is given
const EMPTY_FILE_TEXT = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>";

class ToolError extends Error {}

const text = (t, details = {}, isError = false) => ({ content: [{ type: "text", text: t }], details, is_error: isError });

// -- tools: replace these with calls into your own implementation ------------------------------

function toolRead(root, args) {
  const full = path.resolve(root, args.path);
  if (!fs.existsSync(full)) throw new ToolError(`ENOENT: no such file or directory, access '${full}'`);
  if (!fs.statSync(full).isFile()) return text(`Cannot read '${full}': not a regular file.`, {}, true);
  const content = fs.readFileSync(full, "utf8");
  if (content === "") return text(EMPTY_FILE_TEXT);
  const lines = content.split("\n"); // a final newline leaves an empty last line, counted but not shown
  const total = lines.length;
  const finalNewline = lines[total - 1] === "";
  if (finalNewline) lines.pop();
  const offset = Number(args.offset ?? 1) || 1;
  const limit = Number(args.limit ?? DEFAULT_LIMIT) || DEFAULT_LIMIT;
  const chosen = lines.slice(offset - 1, offset - 1 + limit);
  let out = chosen.map((line, i) => `${String(offset + i).padStart(6)}→${line}`).join("\n");
  const rest = total - (offset - 1 + chosen.length);
  if (rest > 1 || (rest === 1 && !finalNewline)) {
    out += `\n\n[${rest} more lines in file. Use offset=${offset + chosen.length} to continue.]`;
  } else if (finalNewline) {
    out += "\n";
  }
  return text(out);
}

function toolWrite(root, args) {
  const full = path.resolve(root, args.path);
  const existed = fs.existsSync(full);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  const data = Buffer.from(String(args.content), "utf8");
  fs.writeFileSync(full, data);
  const msg = `Successfully wrote ${data.length} bytes to ${args.path}` + (existed ? " (overwrote existing file)" : "");
  return text(msg, { created: !existed, bytes_written: data.length, encoding: "utf-8", bom: false });
}

function toolBash(root, args) {
  // on Windows the bash tool runs PowerShell 7, with UTF-8 output
  const [cmd, argv] = process.platform === "win32"
    ? ["pwsh", ["-NoProfile", "-NonInteractive", "-Command",
                "[Console]::OutputEncoding = [Text.Encoding]::UTF8; " + args.command]]
    : ["bash", ["-c", String(args.command)]];
  const timeout = Number(args.timeout ?? 120) || 120;
  const proc = spawnSync(cmd, argv, { cwd: root, stdio: ["ignore", "pipe", "pipe"],
                               timeout: timeout * 1000, killSignal: "SIGKILL" });
  if (proc.error && proc.error.code === "ETIMEDOUT") throw new ToolError(`Command timed out after ${timeout} seconds`);
  if (proc.error) throw new ToolError(String(proc.error.message));
  const out = Buffer.concat([proc.stdout, proc.stderr]).toString("utf8") || "(no output)";
  if (proc.status !== null && proc.status > 0) return text(`${out}\n\nCommand exited with code ${proc.status}`, {}, true);
  return text(out);
}

const TOOLS = { read: toolRead, write: toolWrite, bash: toolBash };

// -- protocol ------------------------------------------------------------------------------------

function hello() {
  const windows = process.platform === "win32";
  return {
    protocol: 1,
    implementation: IMPLEMENTATION,
    version: VERSION,
    surface: "minimax",
    tools: Object.keys(TOOLS).sort(),
    ops: ["hello", "workspace", "call", "shutdown"],
    patches: [],
    // What this layer is (toolproof's docs/scenario-format.md, "Behaviour, wording and features"):
    // the dialects whose exact wording it speaks (none: only behaviour is judged) and the optional
    // features it has (none: scenarios needing one skip, with the reason). List them as you add them.
    dialects: [],
    features: [],
    capabilities: { os: windows ? "windows" : "linux", shell: windows ? "pwsh" : "bash", symlinks: !windows,
                    fifo: !windows, case_sensitive_fs: !windows,
                    // scenarios about permissions skip under root, where they cannot hold
                    root: typeof process.getuid === "function" && process.getuid() === 0 },
  };
}

let root = process.cwd();

function handle(req) {
  switch (req.op) {
    case "hello": return [hello(), null];
    case "workspace": root = path.resolve(req.root); return [{ root }, null];
    case "shutdown": return [{}, null];
    case "call": {
      const tool = TOOLS[req.tool];
      if (!tool) return [null, { message: `unknown tool '${req.tool}'`, kind: "protocol" }];
      try {
        return [tool(root, req.args || {}), null];
      } catch (err) {
        if (err instanceof ToolError) return [null, { message: err.message, kind: "tool" }];
        return [null, { message: String(err && err.message ? err.message : err), kind: "tool" }];
      }
    }
    default: return [null, { message: `unsupported op '${req.op}'`, kind: "protocol" }];
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let req = {};
  let result = null;
  let error = null;
  try {
    req = JSON.parse(line);
    [result, error] = handle(req);
  } catch (err) {
    error = { message: `internal error: ${err}`, kind: req.op ? "internal" : "protocol" };
  }
  const answer = error ? { id: req.id ?? null, ok: false, error } : { id: req.id ?? null, ok: true, result };
  if (req.op === "shutdown") {
    process.stdout.write(JSON.stringify(answer) + "\n", () => process.exit(0));
    return;
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
