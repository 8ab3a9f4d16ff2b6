/**
 * The current screen of a program in a terminal, as plain text: its output fed to a headless
 * terminal emulator (@xterm/headless), which keeps the cells a full-screen program draws. Loaded on
 * the first terminal process only.
 */

type XtermModule = typeof import("@xterm/headless");
type HeadlessTerminal = InstanceType<XtermModule["Terminal"]>;

export class Screen {
	private constructor(private readonly term: HeadlessTerminal) {}

	static async create(load: () => Promise<XtermModule>, cols: number, rows: number): Promise<Screen> {
		const mod = await load();
		// The package is CommonJS: under ESM its exports may sit on `default`.
		const Terminal = mod.Terminal ?? (mod as unknown as { default: XtermModule }).default.Terminal;
		return new Screen(new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true }));
	}

	write(chunk: Buffer): void {
		this.term.write(chunk);
	}

	/** The visible rows, trailing blanks trimmed, once everything written so far is parsed. */
	async text(): Promise<string> {
		await new Promise<void>((resolve) => this.term.write("", resolve));
		const buf = this.term.buffer.active;
		const rows: string[] = [];
		for (let y = 0; y < this.term.rows; y++)
			rows.push((buf.getLine(buf.viewportY + y)?.translateToString(true) ?? "").trimEnd());
		while (rows.length > 0 && rows[rows.length - 1] === "") rows.pop();
		return rows.join("\n");
	}

	dispose(): void {
		this.term.dispose();
	}
}

/** Loads @xterm/headless once per table (45-190 ms measured here, by load: only terminal processes pay it). */
export function lazyXterm(): () => Promise<XtermModule> {
	let loading: Promise<XtermModule> | undefined;
	return () => {
		loading ??= import("@xterm/headless");
		return loading;
	};
}
