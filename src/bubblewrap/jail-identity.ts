/**
 * @module bubblewrap/jail-identity
 * Who the jailed program runs as on the host. A root caller would keep root's file access
 * inside bubblewrap (it could read root-owned secrets and, with any capability left, remount
 * read-only binds: jail-attack-classes §1–2), so from root the jail starts as `nobody`.
 */

/** The unprivileged user and group a root caller's jails run as. */
export const UNPRIVILEGED_ID = 65534

/** A host identity. */
export interface HostIdentity {
  readonly uid: number
  readonly gid: number
  /** True when the caller is root and the jail drops to {@link UNPRIVILEGED_ID}. */
  readonly dropped: boolean
}

/** The identity jails run as for this process. */
export function jailIdentity(): HostIdentity {
  const uid = process.getuid?.() ?? UNPRIVILEGED_ID
  const gid = process.getgid?.() ?? UNPRIVILEGED_ID
  return uid === 0
    ? { uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID, dropped: true }
    : { uid, gid, dropped: false }
}
