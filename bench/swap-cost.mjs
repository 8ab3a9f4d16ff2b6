/**
 * What the swap's protection against open writers costs by itself: the CPU time of one replace
 * (open the target read-only, create a temp file, swap, close) done four ways, interleaved in
 * blocks of 100 so a busy machine weighs on all alike: a plain rename; with the lease (F_SETSIG,
 * F_SETLEASE, one F_GETLEASE); with renameat2's exchange and the unlink of the old name; with both
 * (what local/lease.ts does). The end-to-end edit is too noisy on a shared machine to show a
 * difference this small; this isolates it.
 *
 * Run after `npm run build`: node bench/swap-cost.mjs [DIR=os.tmpdir()]
 */
import { closeSync, mkdtempSync, openSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { lazyLibc } from "../dist/backend/local/libc.js";

const c = lazyLibc()();
if (!c?.renameat2) {
	console.error("koffi or renameat2 is not available here");
	process.exit(2);
}
const dir = mkdtempSync(join(process.argv[2] ?? tmpdir(), "keel-swap-cost-"));
const target = join(dir, "target");
const temp = join(dir, "temp");
writeFileSync(target, "x");
const [F_SETSIG, F_SETLEASE, F_GETLEASE, F_RDLCK, AT_FDCWD, RENAME_EXCHANGE] = [10, 1024, 1025, 0, -100, 2];
const lease = (fd) => {
	c.fcntl(fd, F_SETSIG, constants.signals.SIGURG);
	c.fcntl(fd, F_SETLEASE, F_RDLCK);
};
const exchange = () => {
	c.renameat2(AT_FDCWD, temp, AT_FDCWD, target, RENAME_EXCHANGE);
	unlinkSync(temp);
};
const replace = (withLease, withExchange) => () => {
	const fd = openSync(target, "r");
	closeSync(openSync(temp, "wx"));
	if (withLease) lease(fd);
	if (withExchange) exchange();
	else renameSync(temp, target);
	if (withLease) c.fcntl(fd, F_GETLEASE, 0);
	closeSync(fd);
};
const ways = {
	rename: replace(false, false),
	lease: replace(true, false),
	exchange: replace(false, true),
	"lease + exchange": replace(true, true),
};
const cpu = Object.fromEntries(Object.keys(ways).map((k) => [k, 0]));
const ROUNDS = 200;
const BLOCK = 100;
try {
	for (let r = 0; r < ROUNDS; r++) {
		for (const [way, run] of Object.entries(ways)) {
			const c0 = process.cpuUsage();
			for (let i = 0; i < BLOCK; i++) run();
			const used = process.cpuUsage(c0);
			cpu[way] += used.user + used.system;
		}
	}
} finally {
	rmSync(dir, { recursive: true, force: true });
}
const per = (way) => cpu[way] / (ROUNDS * BLOCK);
for (const way of Object.keys(ways))
	console.log(
		`${way.padEnd(18)} ${per(way).toFixed(1)} µs CPU per replace (+${(per(way) - per("rename")).toFixed(1)})`,
	);
