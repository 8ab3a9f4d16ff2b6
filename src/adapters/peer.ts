/**
 * The frameworks are optional peer dependencies: an adapter loads its framework with this, so a
 * missing package fails the adapter's import with a message naming what to install.
 */
export async function importPeer<T>(pkg: string, adapter: string, load: () => Promise<T>): Promise<T> {
	try {
		return await load();
	} catch (e) {
		const err = e as NodeJS.ErrnoException;
		if (err?.code === "ERR_MODULE_NOT_FOUND" && err.message.includes(`'${pkg}`)) {
			throw new Error(
				`${adapter} needs the optional peer dependency "${pkg}", which is not installed: npm install ${pkg}`,
				{ cause: e },
			);
		}
		throw e;
	}
}
