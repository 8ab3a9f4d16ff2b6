/**
 * The tail of the exec backend's replace where the target has python3 (durable.py, the replace the
 * ssh file helper runs too, called by exec_replace.py): the
 * target's extended attributes onto the temp file, then the compare-and-swap and the rename, in
 * one python3 process inside the same script (no extra transport call).
 *
 * The rules are local/commit.ts's and local/xattrs.ts's: a file the caller could not write in
 * place is refused; the owner and group are kept (refused when they cannot be); `user.*`, POSIX
 * ACLs, SELinux labels (left alone when policy already gave the new file the same one) and, as
 * root, `trusted.*` are copied; file capabilities are not (a write in place drops them too); an
 * attribute that cannot be set fails the write. Refusals exit EXIT.DENIED with one line on stderr
 * (`readonly`, `owner UID GID`, `attr set NAME (ERRNO)`, ...) and leave the file alone.
 * Everything is read through one handle on the target: its attributes, bytes (hash) and identity;
 * the name must still lead to it; and its attributes, mode and owner must still be those copied
 * (ctime alone misses a change within one clock tick on kernels before 6.13), compared before the
 * final identity check so that only the rename follows it.
 *
 * The write script (exec_write.sh) runs it as `"$py" -I -S -c '<source>' ARGS...` when the target
 * is a regular file; fillPlaceholders refuses a source holding a single quote.
 */
import { fillPlaceholders, hostProgram, joinHostFiles } from "../remote/host-programs.js";
import { EXIT } from "./errors.js";

/** The program, its exit codes filled in (CHANGED and DENIED: the write script passes them on). */
export const replacePy = hostProgram(() =>
	fillPlaceholders(joinHostFiles(["durable.py", "exec_replace.py"]), {
		EXIT_CHANGED: String(EXIT.CHANGED),
		EXIT_DENIED: String(EXIT.DENIED),
	}),
);
