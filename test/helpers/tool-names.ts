/**
 * The tools eitri offers by default, in order: pinned here so a change to the offer is a
 * decision made on purpose, in one place.
 */
export const BUILT_IN_TOOL_NAMES: readonly string[] = [
  'read_file',
  'write_file',
  'edit_file',
  'glob',
  'grep',
  'shell',
  'shell_output',
  'shell_kill',
  'js_eval',
  'mode_get',
  'mode_set',
  'exit_plan_mode',
  'task_create',
  'task_list',
  'task_update',
  'knowledge_add',
  'knowledge_search',
  'knowledge_links',
  'agent_hire',
  'run_await',
  'run_list',
  'run_observe',
  'run_cancel',
  'run_settle',
  'workspace_fork',
  'workspace_list',
  'workspace_use',
  'workspace_diff',
  'workspace_review',
  'workspace_merge',
  'workspace_discard',
  'workspace_log',
  'workspace_snapshots',
  'workspace_restore',
  'room_files',
  'room_read',
  'room_write',
]

/** The tools offered only inside a model Run (they need its model and budget). */
export const MODEL_RUN_TOOL_NAMES: readonly string[] = ['spawn_agent', 'propose_change', 'budget']

/** Every tool eitri registers, in order (`eitri tools`): the model-Run tools follow the Run tools. */
export const REGISTERED_TOOL_NAMES: readonly string[] = BUILT_IN_TOOL_NAMES.flatMap((name) =>
  name === 'run_settle' ? [name, ...MODEL_RUN_TOOL_NAMES] : [name],
)
