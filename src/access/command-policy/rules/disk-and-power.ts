/**
 * @module access/command-policy/rules/disk-and-power
 * Programs that format, partition or overwrite disks, and programs that stop or restart the
 * machine: never run, whatever their arguments.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { isDiskDevice } from '../dangerous-paths.ts'
import { scanOptions } from '../scan-options.ts'
import { quoted, type CommandRuleCheck } from './rule.ts'

const DISK_PROGRAMS = new Set([
  ...['dd', 'mkfs', 'mke2fs', 'mkswap', 'swapon', 'swapoff', 'fdisk', 'sfdisk', 'cfdisk'],
  ...['gdisk', 'sgdisk', 'parted', 'wipefs', 'cryptsetup', 'blkdiscard', 'hdparm', 'losetup'],
])

/** Programs that write to the files named in their arguments. */
const FILE_WRITERS = new Set(['tee', 'cp', 'mv', 'install', 'shred', 'truncate', 'rsync'])

const POWER_PROGRAMS = new Set(['reboot', 'shutdown', 'halt', 'poweroff', 'init', 'telinit'])

/** `systemctl`/`loginctl` verbs that stop, restart or suspend the machine. */
const POWER_VERBS = new Set([
  ...['poweroff', 'reboot', 'halt', 'kexec', 'soft-reboot', 'suspend', 'hibernate'],
  ...['hybrid-sleep', 'suspend-then-hibernate', 'rescue', 'emergency', 'isolate', 'default'],
  'exit',
])

export const checkDiskAndPower: CommandRuleCheck = (command) => {
  const { name } = command
  if (DISK_PROGRAMS.has(name) || name.startsWith('mkfs.') || name.startsWith('mkswap.')) {
    return [
      {
        verdict: 'deny',
        rule: 'disk',
        reason: `${name} formats, partitions or overwrites disks and is never allowed; work with files in the workspace instead`,
      },
    ]
  }
  if (POWER_PROGRAMS.has(name)) return [power(name)]
  const device = FILE_WRITERS.has(name)
    ? command.args.find((word) => word.value !== undefined && isDiskDevice(word.value))
    : undefined
  if (device !== undefined) {
    return [
      {
        verdict: 'deny',
        rule: 'disk',
        reason: `${name} would write to the disk device ${device.text}, which destroys its data; write to a file in the workspace instead`,
      },
    ]
  }
  if (name !== 'systemctl' && name !== 'loginctl') return []
  // Any operand, not only the first: an option that takes a value (`-H host`) would shift it.
  const operands = scanOptions(command.args, []).operands
  const verb = operands.find((word) => word.value !== undefined && POWER_VERBS.has(word.value))
  if (verb !== undefined) return [power(`${name} ${verb.value ?? ''}`)]
  return operands.some((word) => word.value === undefined) ? [dynamicVerb(quoted(command))] : []
}

function power(what: string): CommandFinding {
  return {
    verdict: 'deny',
    rule: 'power',
    reason: `${what} stops or restarts the machine and is never allowed`,
  }
}

function dynamicVerb(command: string): CommandFinding {
  return {
    verdict: 'ask',
    rule: 'dynamic-argument',
    reason: `${command}: the action is only known when it runs and could stop the machine; write it literally`,
  }
}
