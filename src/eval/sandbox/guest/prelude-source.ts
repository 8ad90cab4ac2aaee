/**
 * @module eval/sandbox/guest/prelude-source
 * The prelude and the renderer as source text for the isolate: one function expression taking
 * the two references and the settings, returning the guest handle.
 */
import { installPrelude } from './prelude.ts'
import { createRenderer } from './render.ts'

/** The file name the prelude's frames carry (removed from guest stacks). */
export const PRELUDE_FILENAME = 'eitri:prelude'

/** `(request, report, settings) => handle`, as source. */
export const PRELUDE_SOURCE = `(function (request, report, settings) {
  'use strict'
  const createRenderer = ${createRenderer.toString()}
  const installPrelude = ${installPrelude.toString()}
  return installPrelude(request, report, settings, createRenderer)
})`
