/**
 * Catastrophic commands refused before they run (REQUIREMENTS P4). This is a seatbelt, not a
 * sandbox: real containment comes from the bwrap or a remote backend.
 */
const CATASTROPHIC: Array<[RegExp, string]> = [
	[
		/\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*\s+|--recursive\s+)*(-[a-zA-Z]*\s+)*(\/|\/\*|~|~\/|\$HOME\/?)(\s|$|;|&|\|)/,
		"recursive removal of / or the home directory",
	],
	[/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, "a fork bomb"],
	[/\bmkfs(\.\w+)?\s+\/dev\//, "formatting a block device"],
	[/\bdd\b[^\n]*\bof=\/dev\/(sd|nvme|hd|vd|xvd|mmcblk)/, "writing raw to a disk device"],
	[/>\s*\/dev\/(sd|nvme|hd|vd|xvd)[a-z0-9]*\b/, "redirecting output onto a disk device"],
];

export function refusalFor(command: string): string | undefined {
	for (const [pattern, what] of CATASTROPHIC) {
		if (pattern.test(command)) return `Refused: the command looks like ${what}. Run a narrower command.`;
	}
	return undefined;
}
