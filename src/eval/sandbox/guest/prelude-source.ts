/**
 * @module eval/sandbox/guest/prelude-source
 * The prelude and the renderer as source text for the isolate: one function expression taking
 * the two references and the settings, returning the guest handle. The namespaces built in the
 * guest (`agent`) come with it.
 */
import { createAgentLibrary } from './agent-library.ts'
import { installPrelude } from './prelude.ts'
import { createRenderer } from './render.ts'

/** The file name the prelude's frames carry (removed from guest stacks). */
export const PRELUDE_FILENAME = 'eitri:prelude'

/** `(request, report, settings) => handle`, as source. */
export const PRELUDE_SOURCE = `(function (request, report, settings) {
  'use strict'
  const createRenderer = ${createRenderer.toString()}
  const installPrelude = ${installPrelude.toString()}
  const createAgentLibrary = ${createAgentLibrary.toString()}
  return installPrelude(request, report, settings, createRenderer, { agent: createAgentLibrary })
})`
