/**
 * Timing helpers for the benches: warm up, then take the median of many runs.
 */
import { performance } from 'node:perf_hooks'

/** Median wall time of `run`, in microseconds, after `warmup` unmeasured runs. */
export async function medianMicros(
  run: () => Promise<unknown>,
  iterations: number,
  warmup = Math.ceil(iterations / 10),
): Promise<number> {
  for (let index = 0; index < warmup; index++) await run()
  const samples: number[] = []
  for (let index = 0; index < iterations; index++) {
    const start = performance.now()
    await run()
    samples.push((performance.now() - start) * 1000)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)] as number
}

/** Formats microseconds for a table. */
export function micros(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} ms` : `${value.toFixed(1)} µs`
}

/** Prints one row: a name, the measured value, the alternative, and their ratio. */
export function report(
  name: string,
  ours: number,
  alternative: number,
  alternativeName: string,
): void {
  process.stdout.write(
    `${name.padEnd(44)} ${micros(ours).padStart(10)}   vs ${alternativeName.padEnd(28)} ${micros(alternative).padStart(10)}   ratio ${(ours / alternative).toFixed(2)}x\n`,
  )
}
