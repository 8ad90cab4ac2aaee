/**
 * @module eitri/jail
 * Programs in bubblewrap: the jail of a workspace, a program session for tools, and the path
 * policy that decides what a tool or a jailed program may read and write.
 */
export {
  Jail,
  type JailJob,
  type JailOptions,
  type JailRequest,
  type JailResult,
} from '../jail/jail.ts'
export { JailProgramSession, type OutsideOptions } from '../jail/jail-program-session.ts'
export type { JailBind, JailLimits } from '../bubblewrap/jail-spec.ts'
export type { JailedExit } from '../jail/jailed-process.ts'
export type { SyncReport } from '../jail/write-back.ts'
export type { ForkBelow, ForkDifference, ForkEntry } from '../jail/overlay/fork-layer.ts'
export type { ForkKeep } from '../jail/overlay/fork-keep.ts'
export type { ProgramPathSource } from '../access/git-metadata/judge-git-write.ts'
export type { WorkspaceProgramPath } from '../access/git-metadata/repository-programs.ts'
export type { WriteBackLimits } from '../access/write-back/plan-write-back.ts'
export type { HostIdentity } from '../bubblewrap/jail-identity.ts'
export type { JailAvailability } from '../bubblewrap/jail-probe.ts'
export type { MemorySupport } from '../jail/memory-cgroup.ts'
export {
  decidePath,
  WORKSPACE_MOUNT,
  type PathDecision,
  type PathIntent,
  type PathLookup,
  type PathPolicyOptions,
} from '../access/path-policy.ts'
export { DEFAULT_PROTECTED_PATHS, type ProtectedPathMatcher } from '../access/protected-paths.ts'
