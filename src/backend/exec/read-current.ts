/**
 * The exec backend's FileOps.readCurrent (src/backend/remote/host/exec_read_current.sh): the file
 * as opened, in one transport call. The bytes come with the stat of the descriptor they were read
 * from, so another writer's replace between the tool's stat and this read is the newer file read,
 * not CHANGED_ON_DISK.
 *
 * The script tests the name, opens it, and after the open requires the name to be a regular file
 * (not a link) with the descriptor's device and inode: a link swapped in for the last component
 * is refused, never read through out of the root, and a replace landing between the open and
 * that check is CHANGED_ON_DISK. A FIFO renamed in between the test and the open holds the call
 * until a writer comes (sh cannot open without waiting; the by-name readFile had the same window).
 * python3 could open with O_NOFOLLOW | O_NONBLOCK, but its start-up cost a read in a podman
 * container 17 ms more (95 against 78 ms; this script 73 ms, bench/cases-container.mjs).
 *
 * Output: `st STAT\n` then the bytes, or `big STAT\n` alone when the file as opened is larger
 * than the bound. STAT is the target's stat(1) line (statFormat). Bounded, exactly the size at
 * the open is read; fewer bytes (a truncation meanwhile) are CHANGED_ON_DISK.
 */
import { joined, perFormat } from "./scripts.js";

/** readCurrent PATH LIMIT (LIMIT empty: unbounded); its reply is read by remote/read-current-reply.ts. */
export const readCurrentScript = perFormat(joined("exec_read_checks.sh", "exec_read_current.sh"));
