/**
 * @module cli/run-tree
 * The live view of a Run and its children on stderr while `eitri run` waits: read from the
 * store (so children hired deep in the tree show too), redrawn in place on a terminal, and a
 * line per change otherwise (a log keeps every step, and nothing is overwritten). A model Run
 * shows its steps, tool calls, tokens and dollars, read from its journal as it grows.
 */
import type { RunRecord } from '../store/run-record.ts'
import type { Store } from '../store/store.ts'
import { emptyActivity, foldEvent, totalsText, type RunActivity } from './run-activity.ts'

/** A view that follows one Run tree until stopped. */
export interface RunTreeView {
  /** Stops drawing while a person is asked something on the same terminal. */
  hold(): void
  /** Draws again, below what was asked. */
  release(): void
  /** Reads the tree once more, draws its final state and stops. */
  stop(): Promise<void>
}

/** What a view is made from. */
export interface RunTreeOptions {
  readonly store: Store
  readonly rootId: string
  readonly write: (text: string) => void
  /**
   * Where the view's own cursor moves go when it redraws, written as they are (`write` may show
   * controls as escapes, so that a Run's text cannot move the cursor). @default write
   */
  readonly controls?: (controls: string) => void
  /** Redraw in place (a terminal) instead of a line per change. */
  readonly redraw: boolean
  /** @default 100 */
  readonly pollMs?: number
}

/** The most Runs a view reads: a bigger tree shows its first ones. */
const MAX_SHOWN = 200

/** Starts following the tree of `rootId`. */
export function watchRunTree(options: RunTreeOptions): RunTreeView {
  const { store, rootId, write, redraw } = options
  const controls = options.controls ?? write
  const seen = new Map<string, string>()
  const journals = new Map<string, { after: number; activity: RunActivity }>()
  let drawn: string[] = []
  let held = false
  let stopped = false
  let reading: Promise<void> = Promise.resolve()

  /** Reads what each Run journaled since the last read: the lines to log, by Run. */
  const readJournals = async (rows: readonly { readonly run: RunRecord }[]) => {
    const logged = new Map<string, string[]>()
    for (const { run } of rows) {
      const journal = journals.get(run.id) ?? { after: 0, activity: emptyActivity() }
      journals.set(run.id, journal)
      const events = await store.listRunEvents(run.id, { after: journal.after })
      const lines: string[] = []
      for (const event of events) {
        journal.after = event.sequence
        const line = foldEvent(journal.activity, event)
        if (line !== undefined) lines.push(line)
      }
      logged.set(run.id, lines)
    }
    return logged
  }
  const describe = (run: RunRecord): string => {
    const activity = journals.get(run.id)?.activity
    if (activity === undefined || (activity.steps === 0 && activity.doing === '')) {
      return describeRun(run)
    }
    const doing = activity.doing === '' || run.status !== 'running' ? '' : `, ${activity.doing}`
    return `${describeRun(run)} [${totalsText(activity)}${doing}]`
  }
  const draw = (
    rows: readonly { readonly run: RunRecord; readonly depth: number }[],
    logged: ReadonlyMap<string, readonly string[]>,
  ) => {
    if (held) return
    const lines = rows.map(({ run, depth }) => `${'  '.repeat(depth)}${describe(run)}`)
    if (redraw) {
      if (lines.join('\n') === drawn.join('\n')) return
      // Up over the lines drawn last, erase to the end, draw again.
      if (drawn.length > 0) controls(`\x1b[${drawn.length}A\r\x1b[J`)
      write(`${lines.join('\n')}\n`)
      drawn = lines
      return
    }
    rows.forEach(({ run, depth }, index) => {
      // A log keeps each step and tool call; the Run's own line is written when its status changes.
      const line = `${'  '.repeat(depth)}${describeRun(run)}`
      for (const event of logged.get(run.id) ?? []) {
        write(`eitri: ${'  '.repeat(depth)}${run.agentId ?? run.kind} ${run.id} ${event}\n`)
      }
      if (seen.get(run.id) === line) return
      seen.set(run.id, line)
      write(`eitri: ${lines[index] as string}\n`)
    })
  }
  const readOnce = async () => {
    try {
      const rows = await readTree(store, rootId)
      // Not read while held: the journal's lines wait for the view to draw again.
      draw(rows, held ? new Map() : await readJournals(rows))
    } catch {
      // A read that fails (the store busy) is tried again at the next tick; the view is a courtesy.
    }
  }
  const tick = () => {
    reading = reading.then(readOnce)
    return reading
  }
  void tick()
  const timer = setInterval(() => void tick(), options.pollMs ?? 100)
  return {
    hold: () => {
      held = true
    },
    release: () => {
      held = false
      // The prompt was written below the tree: draw a fresh one under it.
      drawn = []
    },
    async stop() {
      if (stopped) return
      stopped = true
      clearInterval(timer)
      held = false
      await tick()
    },
  }
}

/** The root and its descendants, depth first, each with its depth. */
async function readTree(
  store: Store,
  rootId: string,
): Promise<{ readonly run: RunRecord; readonly depth: number }[]> {
  const root = await store.getRun(rootId)
  if (root === undefined) return []
  const rows: { run: RunRecord; depth: number }[] = []
  const visit = async (run: RunRecord, depth: number): Promise<void> => {
    if (rows.length >= MAX_SHOWN) return
    rows.push({ run, depth })
    // The store answers newest first; a tree reads better in the order they were hired.
    const children = await store.listRuns({ parentId: run.id, limit: MAX_SHOWN })
    for (const child of children.reverse()) await visit(child, depth + 1)
  }
  await visit(root, 0)
  return rows
}

/** `agent run-id status[: reason][ → settlement (reason)]`. */
export function describeRun(run: RunRecord): string {
  const status = run.reason === null ? run.status : `${run.status}: ${run.reason}`
  const settlement =
    run.settlementStatus === 'open'
      ? ''
      : ` → ${run.settlementStatus}${run.settlementReason === null ? '' : ` (${run.settlementReason})`}`
  return `${run.agentId ?? run.kind} ${run.id} ${status}${settlement}`
}
