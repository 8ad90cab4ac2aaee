/**
 * @module bubblewrap/jail-probe
 * Whether jails can run here, found by running one real jailed command (not `bwrap --version`:
 * an installed bubblewrap may still be unable to create namespaces). The verdict says why not
 * and how to fix it.
 */

/** The probe's verdict. */
export type JailAvailability =
  | { readonly available: true }
  | { readonly available: false; readonly reason: string; readonly fix: string }

/** Explains a failed probe from how it failed. */
export function explainProbeFailure(failure: {
  spawnError?: string | undefined
  exitCode: number | null
  stderr: string
}): JailAvailability {
  if (failure.spawnError !== undefined) {
    if (/ENOENT/.test(failure.spawnError)) {
      return unavailable(
        'bubblewrap (bwrap) is not installed',
        'install it: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora)',
      )
    }
    return unavailable(
      `bubblewrap could not be started: ${failure.spawnError}`,
      'check that bwrap is executable by this user',
    )
  }
  const stderr = failure.stderr.trim()
  // Started through a step that drops to the jail's user (setpriv) or enters a namespace
  // (nsenter): that step, not the spawn, finds bubblewrap missing.
  if (failure.exitCode === 127 && /failed to execute .*bwrap.*No such file/.test(stderr)) {
    return unavailable(
      'bubblewrap (bwrap) is not installed',
      'install it: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora)',
    )
  }
  if (/prlimit/.test(stderr) && /No such file/.test(stderr)) {
    return unavailable(
      'prlimit is missing inside the jail',
      'install util-linux (it provides /usr/bin/prlimit)',
    )
  }
  if (
    /user namespace|uid map|setting up uid|Operation not permitted|No permissions|newuidmap/i.test(
      stderr,
    )
  ) {
    return unavailable(
      `bubblewrap cannot create a user namespace here: ${firstLine(stderr)}`,
      'allow unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 and user.max_user_namespaces=15000; on Ubuntu 24.04 and later also kernel.apparmor_restrict_unprivileged_userns=0; inside a container, run it with --privileged or a seccomp profile that allows unshare/clone with namespaces',
    )
  }
  if (/proc/i.test(stderr) && /mount/i.test(stderr)) {
    return unavailable(
      `bubblewrap cannot mount /proc: ${firstLine(stderr)}`,
      'inside a container, give it its own PID namespace or run it with --privileged',
    )
  }
  return unavailable(
    `a test command in the jail failed (exit ${failure.exitCode ?? 'by signal'}): ${firstLine(stderr) || 'no message'}`,
    'run `bwrap --unshare-all --ro-bind /usr /usr --symlink usr/bin /bin -- /bin/true` to see the error',
  )
}

function unavailable(reason: string, fix: string): JailAvailability {
  return { available: false, reason, fix }
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? ''
}
