/**
 * Runs one command in a jail over a workspace, for attack 18 (TIOCSTI): it is started under
 * a pseudo-terminal, so the jail's parent has a controlling terminal a jailed program could
 * inject keystrokes into. The jailed command is `python3 -c "$EITRI_TTY_INJECTOR" "$EITRI_TTY_TEXT"`.
 *
 * Usage: node jail-in-terminal.ts WORKSPACE RESULT_FILE
 */
import fs from 'node:fs'
import { createWorkspaceView } from '../../src/access/confined-workspace.ts'
import { Jail } from '../../src/jail/jail.ts'
import { DirectoryTree } from '../../src/workspace/directory-tree.ts'

const [workspace = '', resultFile = ''] = process.argv.slice(2)
const tree = new DirectoryTree(workspace)
await using jail = new Jail({ tree, view: createWorkspaceView({ tree }), waitForWarmJail: true })
const outputs: string[] = []
// The warm jail (a supervisor's child) and a fresh one (bubblewrap's own child), in turn.
for (const limits of [undefined, {}]) {
  const result = await jail.run({
    command: ['/bin/bash', '-c', 'python3 -c "$EITRI_TTY_INJECTOR" "$EITRI_TTY_TEXT"'],
    access: 'workspace-write',
    timeoutMs: 10_000,
    environment: {
      EITRI_TTY_INJECTOR: process.env.EITRI_TTY_INJECTOR ?? '',
      EITRI_TTY_TEXT: process.env.EITRI_TTY_TEXT ?? '',
    },
    ...(limits === undefined ? {} : { limits }),
  })
  outputs.push(`${result.stdout}${result.stderr}`)
}
fs.writeFileSync(resultFile, outputs.join('\n'))
