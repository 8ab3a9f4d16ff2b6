/** What createSshBackend takes to reach the host (the file options are in fs.ts). */
export interface SshConnectOptions {
	/** A host name, address or ~/.ssh/config alias (`Host` patterns match it as given). */
	host: string;
	/** Default: the config file's Port, else 22. */
	port?: number;
	/** Default: the config file's User, else the local user name (as ssh does). */
	username?: string;
	/** A private key (OpenSSH/PEM text). */
	privateKey?: string | Buffer;
	/**
	 * A private key file (--identity FILE). Without either: the config file's first existing
	 * IdentityFile, else ~/.ssh/id_ed25519, id_ecdsa, id_rsa.
	 */
	identityFile?: string;
	passphrase?: string;
	/** ssh-agent socket; default SSH_AUTH_SOCK when set; false: never use an agent. */
	agent?: string | false;
	/**
	 * Default: the config file's UserKnownHostsFile and GlobalKnownHostsFile, else
	 * ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts.
	 */
	knownHostsFile?: string;
	/**
	 * OpenSSH client configuration for HostName, User, Port, IdentityFile, HostKeyAlias and
	 * User/GlobalKnownHostsFile (see client-config.ts); explicit options win over it. Default
	 * ~/.ssh/config (missing or unreadable: none); false: read none.
	 */
	sshConfigFile?: string | false;
	/** Accept any host key (--insecure-host-key). Never the default. */
	insecureHostKey?: boolean;
	/** TCP connect plus SSH handshake and authentication; default 15 s. */
	connectTimeoutMs?: number;
	/** Replaces PATH in the remote shells (tests: a host without rg/fd). */
	remotePath?: string;
	/** Job shells run concurrently at most (commands and search); default 4. */
	maxJobShells?: number;
}
