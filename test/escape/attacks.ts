/**
 * The attacks of docs/jail-attack-classes.md, each tried for real against the jail and the host file
 * tools, each with a positive control (the same attack without the jail reaches its target)
 * and a canary checked on the host afterwards.
 *
 * Classes that do not apply here:
 * - 14 io_uring seccomp bypass: the jail does not rely on seccomp; namespaces, a dropped
 *   capability set and a minimal file system confine it, and io_uring reaches nothing more.
 * - 15 proxy parser differentials: there is no network proxy; the jail has no network at all.
 * - 28 sandbox downgrade via delegation: there is no agent layer yet that could spawn a child
 *   with a weaker mode.
 */
import { fileAttacks } from './file-attacks.ts'
import type { Attack } from './helpers.ts'
import { networkAttacks } from './network-attacks.ts'
import { privilegeAttacks } from './privilege-attacks.ts'
import { processAttacks } from './process-attacks.ts'
import { protectedPathAttacks } from './protected-path-attacks.ts'
import { repositoryAttacks } from './repository-attacks.ts'
import { supervisorAttacks } from './supervisor-attacks.ts'

/** Every attack, by class number. */
export const ATTACKS: readonly Attack[] = [
  ...fileAttacks,
  ...protectedPathAttacks,
  ...processAttacks,
  ...supervisorAttacks,
  ...privilegeAttacks,
  ...networkAttacks,
  ...repositoryAttacks,
].sort((a, b) => a.id - b.id)

/** A stable key per attack (a class may have more than one). */
export function attackKey(attack: Pick<Attack, 'id' | 'name'>): string {
  return `${attack.id}: ${attack.name}`
}
