/**
 * Catastrophic commands refused before they run: a seatbelt against accidents, not a boundary
 * (containment comes from the bwrap or a remote backend). The command is parsed with a real shell
 * grammar (shell-syntax.ts) and refused by what it does, however it is spelled: quoting (`"/"`,
 * `r\m`, `$'\x2f'`), option order (`--`, `--no-preserve-root`, `-r -f`), `$HOME`/`~`, brace lists,
 * wrappers (`sudo`, `env`, `xargs`, `timeout`, ...), `sh -c` strings, `eval` and here-documents fed
 * to a shell are all seen through; a part known only when it runs (`$X`, `$(...)`) is taken as
 * empty when that is what makes it catastrophic (`rm -rf "$X/"`).
 *
 * Refused: recursive removal (`rm -r`, `find -delete`, `find -exec rm`) of `/`, a top-level
 * directory or a home directory; a fork bomb (a function that calls itself twice); formatting a
 * block device; writing raw to a disk device (`dd of=`, a redirection, `tee`, `cp`).
 */
import { type BashParse, lazyBashParser, type SyntaxNode } from "./shell-syntax.js";
import { asSource, expandBraces, HOME, UNKNOWN, wordValue } from "./shell-words.js";

const bashParser = lazyBashParser();

/**
 * Text every command this policy refuses contains: a command name it judges, `/dev/`, a function
 * definition, a nested shell, or the quoting, escapes, expansions and braces that could spell one.
 * A command without any (`ls -la`, `npm test`) is not parsed, and the grammar is not even loaded.
 */
const MAY_REFUSE = /rm|find|mk|dd|wipefs|blkdiscard|tee|cp|shred|\/dev\/|\(|function|eval|sh|[\\'"$`{]/;

/** Why `command` is refused (a sentence for the model), or undefined when it may run. */
export async function refusalFor(command: string): Promise<string | undefined> {
	if (!MAY_REFUSE.test(command)) return undefined;
	const parse = await bashParser();
	const what = parse ? meaning(parse, command, 0) : fallback(command);
	return what ? `Refused: the command is ${what}. Run a narrower command.` : undefined;
}

const MAX_NESTING = 4;
const SHELLS = /^(sh|bash|dash|zsh|ksh|mksh|ash)$/;

function meaning(parse: BashParse, source: string, depth: number): string | undefined {
	if (depth > MAX_NESTING) return undefined;
	const { root, free } = parse(source);
	try {
		for (const node of root.descendantsOfType(["command", "function_definition", "file_redirect"])) {
			if (!node) continue;
			const why =
				node.type === "command"
					? commandMeaning(parse, node, depth)
					: node.type === "function_definition"
						? forkBomb(node)
						: redirectMeaning(node);
			if (why) return why;
		}
		return undefined;
	} finally {
		free();
	}
}

function commandMeaning(parse: BashParse, node: SyntaxNode, depth: number): string | undefined {
	const name = node.childForFieldName("name");
	if (!name) return undefined;
	// Brace lists expand into words (`sudo {rm,-rf} /` is `sudo rm -rf /`).
	const words = unwrap(
		[
			wordValue(name),
			...node.childrenForFieldName("argument").map((a) => (a ? wordValue(a) : UNKNOWN)),
		].flatMap(expandBraces),
	);
	if (words.length === 0) return undefined;
	const cmd = words[0].replace(/^.*\//, "");
	const args = words.slice(1);
	const nested = nestedScript(cmd, args) ?? hereDocument(cmd, node);
	if (nested !== undefined) {
		const why = meaning(parse, nested, depth + 1);
		if (why) return why;
	}
	if (cmd === "rm") return removal(args);
	if (cmd === "find") return findRemoval(args);
	if (/^(mkfs(\..+)?|mke2fs|mkswap|wipefs|blkdiscard)$/.test(cmd) && args.some((a) => /^\/+dev\//.test(a)))
		return "formatting a block device";
	if (cmd === "dd" && args.some((a) => a.startsWith("of=") && isDisk(a.slice(3))))
		return "writing raw to a disk device";
	if ((cmd === "tee" || cmd === "cp" || cmd === "shred") && args.some(isDisk))
		return "writing raw to a disk device";
	return undefined;
}

/** A script the command runs as shell code: `sh -c STRING`, `eval WORDS`. */
function nestedScript(cmd: string, args: string[]): string | undefined {
	if (cmd === "eval") return args.map(asSource).join(" ");
	if (!SHELLS.test(cmd)) return undefined;
	let hasC = false;
	for (const a of args) {
		if (a.startsWith("-") && a !== "-" && !a.startsWith("--")) {
			hasC ||= a.includes("c");
			continue;
		}
		return hasC ? asSource(a) : undefined;
	}
	return undefined;
}

/** A here-document fed to a shell (`bash <<EOF`): its body is the script. */
function hereDocument(cmd: string, node: SyntaxNode): string | undefined {
	if (!SHELLS.test(cmd) || node.parent?.type !== "redirected_statement") return undefined;
	return node.parent.descendantsOfType("heredoc_body")[0]?.text;
}

/** Commands that run the rest of their words as a command: options that take an argument, positionals. */
const WRAPPERS: Record<string, { withArg: RegExp; positional?: number }> = {
	sudo: { withArg: /^-[ugCDhprtUT]$/ },
	doas: { withArg: /^-[uC]$/ },
	env: { withArg: /^-[uCS]$/ },
	command: { withArg: /^$/ },
	builtin: { withArg: /^$/ },
	exec: { withArg: /^-a$/ },
	nohup: { withArg: /^$/ },
	time: { withArg: /^-[fo]$/ },
	busybox: { withArg: /^$/ },
	nice: { withArg: /^-n$/ },
	ionice: { withArg: /^-[cnp]$/ },
	stdbuf: { withArg: /^-[ioe]$/ },
	timeout: { withArg: /^-[sk]$/, positional: 1 },
	xargs: { withArg: /^-[IinPdELsa]$/ },
};

/** The command a chain of wrappers (`sudo env X=1 nice rm ...`) runs, as words. */
function unwrap(words: string[]): string[] {
	let w = words;
	for (let hops = 0; hops < 8 && w.length > 0; hops++) {
		const spec = WRAPPERS[w[0].replace(/^.*\//, "")];
		if (!spec) break;
		let i = 1;
		while (i < w.length) {
			const a = w[i];
			if (a === "--") {
				i++;
				break;
			}
			if (a.startsWith("-") && a.length > 1) i += spec.withArg.test(a) ? 2 : 1;
			else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(a))
				i++; // env's NAME=VALUE
			else break;
		}
		w = w.slice(i + (spec.positional ?? 0));
	}
	return w;
}

/** `rm` with a recursive option and a catastrophic operand (options may come after operands). */
function removal(args: string[]): string | undefined {
	let recursive = false;
	let noPreserveRoot = false;
	let optionsEnd = false;
	const operands: string[] = [];
	for (const a of args) {
		if (!optionsEnd && a === "--") optionsEnd = true;
		else if (!optionsEnd && a.startsWith("--")) {
			recursive ||= a === "--recursive";
			noPreserveRoot ||= a === "--no-preserve-root";
		} else if (!optionsEnd && a.startsWith("-") && a.length > 1) recursive ||= /[rR]/.test(a);
		else operands.push(a);
	}
	if (!recursive) return undefined;
	if (noPreserveRoot) return "a recursive removal with --no-preserve-root";
	for (const op of operands) {
		const target = operandTarget(op);
		if (target) return `a recursive removal of ${target}`;
	}
	return undefined;
}

/** `find START... -delete` or `-exec rm` from a catastrophic starting point. */
function findRemoval(args: string[]): string | undefined {
	const firstExpr = args.findIndex((a) => a.startsWith("-") || a === "(" || a === "!");
	const starts = firstExpr < 0 ? args : args.slice(0, firstExpr);
	const expr = firstExpr < 0 ? [] : args.slice(firstExpr);
	const deletes = expr.some(
		(a, i) =>
			a === "-delete" ||
			(/^-(exec|execdir|ok|okdir)$/.test(a) &&
				/^(rm|shred|unlink)$/.test((expr[i + 1] ?? "").replace(/^.*\//, ""))),
	);
	if (!deletes) return undefined;
	for (const s of starts) {
		const target = operandTarget(s);
		if (target) return `a recursive removal of ${target} (find)`;
	}
	return undefined;
}

/** What catastrophic thing an operand names, after brace lists; a run-time part taken as empty too. */
function operandTarget(operand: string): string | undefined {
	for (const word of expandBraces(operand)) {
		if (!word.includes(UNKNOWN)) {
			const t = target(word, true);
			if (t) return t;
			continue;
		}
		const t = target(word.split(UNKNOWN).join(""), false);
		if (t) return `${t} (when a variable or substitution in ${shown(word)} is empty)`;
	}
	return undefined;
}

/** `/`, a top-level directory (when `topLevel`) or a home directory, as `path` names it. */
function target(path: string, topLevel: boolean): string | undefined {
	const inHome = path.startsWith(HOME);
	const rest = inHome ? path.slice(HOME.length) : path;
	if (!inHome && !rest.startsWith("/")) return undefined;
	const parts: string[] = [];
	let above = false;
	for (const p of rest.split("/")) {
		if (p === "" || p === ".") continue;
		if (p === "..") above ||= parts.pop() === undefined;
		else parts.push(p);
	}
	const everything = parts.length === 0 || (parts.length === 1 && /^[*?.]*\*[*?]*$/.test(parts[0]));
	if (inHome) return everything || above ? "a home directory" : undefined;
	if (everything) return "/";
	return topLevel && parts.length === 1 ? `the top-level directory /${parts[0]}` : undefined;
}

function isDisk(path: string): boolean {
	return /^\/+dev\/+(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\/)/.test(path);
}

function shown(value: string): string {
	return value.split(HOME).join("~").split(UNKNOWN).join("$…");
}

/** A function that calls itself twice or more (`:(){ :|:& };:`). */
function forkBomb(node: SyntaxNode): string | undefined {
	const name = node.childForFieldName("name")?.text;
	const body = node.childForFieldName("body");
	if (!name || !body) return undefined;
	const calls = body
		.descendantsOfType("command")
		.filter((c) => c?.childForFieldName("name")?.text === name).length;
	return calls >= 2 ? "a fork bomb" : undefined;
}

function redirectMeaning(node: SyntaxNode): string | undefined {
	const dest = node.childForFieldName("destination");
	const writes = node.children.some((c) => c && /^(>|>>|>\||&>|&>>)$/.test(c.type));
	return dest && writes && isDisk(wordValue(dest)) ? "redirecting output onto a disk device" : undefined;
}

/** Without the grammar (it failed to load): textual patterns, better than nothing. */
function fallback(command: string): string | undefined {
	if (/\brm\s+(-\S*\s+)*["']?(\/|\/\*|~\/?|\$\{?HOME\}?\/?)["']?(\s|$|;|&|\|)/.test(command))
		return "a recursive removal of / or the home directory";
	if (/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/.test(command)) return "a fork bomb";
	if (/\bmkfs(\.\w+)?\s+\/dev\//.test(command)) return "formatting a block device";
	if (/\bdd\b[^\n]*\bof=\/dev\/(sd|nvme|hd|vd|xvd|mmcblk)/.test(command))
		return "writing raw to a disk device";
	return undefined;
}
